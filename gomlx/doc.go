// Package gomlx holds the GoMLX backends fedpipe owns and chooses between: fpfast, the
// default (package fastcpu: package cpubackend's graphs with every float32 matrix product
// on package gemm's SGEMM), fpcpu, the reference it is tested against (package cpubackend),
// and GoMLX's XLA backend over a PJRT plugin found on the machine (package xlaenv; compiled
// in only with the build tag xla).
//
// This package resolves a backend request (a flag or $GOMLX_BACKEND) into a configuration
// (Resolve), creates one shared backend per configuration (Get) and names the backend in
// the id that goes into every train stage's key (ID, with the versions of the graphs
// package model builds). It knows nothing of networks or training.
package gomlx
