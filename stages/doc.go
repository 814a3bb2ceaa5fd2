// Package stages wires the stage kinds of a fedpipe DAG — partition, train, evaluate,
// report — to their implementations in the sub-packages.
package stages
