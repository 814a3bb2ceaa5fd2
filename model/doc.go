// Package model holds the networks fedpipe trains — cnn4, fedavgcnn, resnet18,
// resnet18_imagenet, mlp and logreg (ModelSpec, with their parameter names, shapes and
// seeded initialisation) — built as GoMLX graphs and compiled into training and evaluation
// sessions (Model) on a backend: fpfast, the default (package fastcpu, with the GEMM
// kernels of package gemm), fpcpu, the reference it is tested against (package
// cpubackend), or XLA under the xla build tag. The backend's identity (BackendID) is part
// of every train stage's key. It also measures itself: training throughput and one
// FedOBP-FMNIST round next to PyTorch (bench.go, benchround.go; `fedpipe bench`).
package model
