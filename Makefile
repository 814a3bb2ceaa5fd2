# fedpipe — the two entry points are `make run` and `make test`; both set up what they need.
GO      ?= go
BIN     := bin/fedpipe
FMNIST  := /usr/share/datasets/fashion-mnist
# Fuzz targets run this long each under `make fuzz` (and in CI).
FUZZTIME ?= 10s

.PHONY: all build run smoke test vet fmt-check data bench bench-round fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/fedpipe

## run: the quick start (Synthetic data, seconds); a second run is all cached.
run: build
	./$(BIN) run manifests/quickstart.yaml

## smoke: real Fashion-MNIST, FedAvg vs Local under Dir(0.1) (a few minutes).
smoke: build data
	./$(BIN) run manifests/fmnist-smoke.yaml

## data: install Fashion-MNIST from Debian when it is missing and we may (root + apt-get).
data:
	@if [ -f $(FMNIST)/train-images-idx3-ubyte.gz ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing dataset-fashion-mnist"; \
		(apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1 || \
		 (apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist)) ; \
	else echo "note: Fashion-MNIST missing; tests that need it will skip (apt-get install dataset-fashion-mnist)"; fi

## test: formatting, vet, and every test (FMNIST tests run when the data is installed).
test: data fmt-check vet build
	$(GO) test -count=1 -timeout 25m ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## bench: CNN4 samples/s on our backend next to PyTorch (needs python3-torch for the ratio).
bench: build
	./$(BIN) bench

## bench-round: one FedOBP-FMNIST round and 100-client evaluations (with 5 fine-tuning epochs)
## next to ../shared/bench/torch_round.py, the projected Table 6 cell and peak RSS (about 15
## minutes on 2 idle cores; needs python3-torch for the ratios). Take figures on an idle machine.
bench-round: build
	./$(BIN) bench --round

## fuzz: each fuzz target for $(FUZZTIME).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseManifest$$' -fuzztime $(FUZZTIME) ./pipeline
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./artifacts/tensor
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./artifacts/table
	$(GO) test -run '^$$' -fuzz '^FuzzReadIDX$$' -fuzztime $(FUZZTIME) ./stages/data
	$(GO) test -run '^$$' -fuzz '^FuzzReadMAT$$' -fuzztime $(FUZZTIME) ./stages/data
	$(GO) test -run '^$$' -fuzz '^FuzzReadNPY$$' -fuzztime $(FUZZTIME) ./stages/data

clean:
	rm -rf bin .fedpipe
