// Package model holds the networks fedpipe trains — cnn4, fedavgcnn, resnet18,
// resnet18_imagenet, mlp and logreg (ModelSpec, with their parameter names, shapes and
// seeded initialisation) — built as GoMLX graphs and compiled into training and evaluation
// sessions (Model) on a backend of package gomlx (github.com/fedpipe/fedpipe/gomlx):
// fpfast, the default, fpcpu, the reference it is tested against, or XLA under the xla
// build tag. The backend's identity (BackendID: gomlx.ID with this package's graph
// versions) is part of every train stage's key. It also measures itself: training
// throughput (bench.go) and the synthetic federated round (synthround.go) that package
// bench times and prints for `fedpipe bench` and CheckBackend compares across backends.
package model
