// Package stages implements the stage kinds of a fedpipe DAG (manifest.Kind*) against
// stages.Context, the executor's view a stage gets (context.go):
//
//   - partition (manifest.KindPartition): deals the dataset's samples to clients and
//     splits each client's share into train and test (stages/partition). Output:
//     `assignment`.
//   - train (manifest.KindTrain): the federated loop and the run's method (stages/train),
//     with resumable checkpoints. Outputs: `metrics`, `global`, per-client `model/NNNNN`
//     and `personal/NNNNN`, masks, `selection` and `mask_iou` (methods that select), `comm`,
//     `work`, `cost`. A longer run of a cached train stage continues from it (extend.go).
//   - evaluate (manifest.KindEvaluate): every client's final test accuracy and the run's
//     summary, final and best, client mean and pooled, before fine-tuning and (for runs
//     that fine-tune) after (the arithmetic in results/summary). Outputs: `clients`,
//     `summary`.
//   - shift (manifest.KindShift): the final models evaluated under the manifest's shift
//     block — degrees, label shift, corruptions, real CIFAR-10-C (stages/shift). Outputs:
//     `clients`, `summary`.
//   - report (manifest.KindReport): one row per run and the run's report.md
//     (laid out by results/summary). Outputs: `report.md`, `runs`.
//
// Every Arrow table among these outputs has its row type and schema in package results
// (results.Metric, results.Summary, …) and is written and read with results.Encode and
// results.Decode.
//
// Funcs maps each kind to its implementation, one file per kind (partition_kind.go,
// train_kind.go, evaluate_kind.go, shift_kind.go, report_kind.go; stages.go holds what they
// share); stage packages never import pipeline.
package stages
