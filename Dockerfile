# The image `fedpipe k8s --image` runs: the fedpipe binary on a small Debian base.
#
#   docker build -t registry.example/fedpipe:v1 .
#   docker push registry.example/fedpipe:v1
#
# The image holds no credentials and no store: workers get the remote's credentials from a
# Kubernetes Secret and keep their local store in an emptyDir (see README, "Running a sweep
# on many machines").
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/fedpipe ./cmd/fedpipe

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
# Datasets the manifests read belong in the image or in a volume given with --data, e.g.
# Fashion-MNIST from Debian (found without --data):
#   RUN apt-get update && apt-get install -y --no-install-recommends dataset-fashion-mnist
COPY --from=build /out/fedpipe /usr/local/bin/fedpipe
USER 65532:65532
WORKDIR /var/lib/fedpipe
ENTRYPOINT ["fedpipe"]
