// Package methods holds the federated methods the train stage runs, one file per method
// with its test beside it. Each file declares its method entirely: an init function calls
// train.Register with the method's name, doc and capabilities (manifest.MethodDef), its
// parameter struct (defaults and ranges as struct tags, validated by the manifest package)
// and its constructor. The methods reach the loop only through train's exported API
// (Local, State with its typed Method state, Upload, the optional interfaces in
// stages/train/method.go). Linking this package registers them: stages imports it.
package methods
