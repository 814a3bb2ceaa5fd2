package results

import (
	"fmt"
	"strings"
)

// The output names of each stage kind: the contract between the stage that writes an
// output and every reader of it (the stages after it, ls, report, verify, export, the
// audit). A stage writes its outputs under these names and nothing else names them;
// docs/outputs.md lists them with what each holds.
const (
	// OutPartitionAssignment is the partition stage's client assignment (stages/partition's
	// encoding).
	OutPartitionAssignment = "assignment"

	// OutTrainGlobal is the train stage's final global model state (a tensor list).
	OutTrainGlobal = "global"
	// OutTrainEvalGlobal is the global model the train stage's method evaluates with,
	// where it keeps one beside the personal ones (a tensor list).
	OutTrainEvalGlobal = "model/global"
	// OutTrainMetrics is the train stage's per-round metrics table (rows of Metric).
	OutTrainMetrics = "metrics"
	// OutTrainSelection is the train stage's per-round selection table (rows of
	// Selection), written by methods that select.
	OutTrainSelection = "selection"
	// OutTrainComm is the train stage's per-round communication table (rows of Comm).
	OutTrainComm = "comm"
	// OutTrainWork is the train stage's per-round work table (rows of Work).
	OutTrainWork = "work"
	// OutTrainCost is the train stage's per-client cost table (rows of Cost).
	OutTrainCost = "cost"
	// OutTrainMaskIoU is the train stage's pairwise mask IoU table (rows of MaskIoU),
	// written by methods with masks.
	OutTrainMaskIoU = "mask_iou"
	// OutTrainFingerprints is the train stage's per-round state digests, which an audit
	// recomputes.
	OutTrainFingerprints = "fingerprints"
	// OutTrainSketch is the train stage's sketch of its state after one round, which the
	// cross-backend check compares.
	OutTrainSketch = "sketch"

	// OutEvaluateClients is the evaluate stage's per-client final results (rows of Client).
	OutEvaluateClients = "clients"
	// OutEvaluateSummary is the evaluate stage's summary (one row of Summary).
	OutEvaluateSummary = "summary"

	// OutShiftClients is the shift stage's per-client results (rows of ShiftClient).
	OutShiftClients = "clients"
	// OutShiftSummary is the shift stage's summary per shift and level (rows of
	// ShiftSummary).
	OutShiftSummary = "summary"

	// OutReportMarkdown is the report stage's markdown report.
	OutReportMarkdown = "report.md"
	// OutReportRuns is the report stage's run table (rows of Run).
	OutReportRuns = "runs"
)

// The kinds of per-client train outputs, each stored once per client under
// ClientOutput(kind, client), and the prefix of the method's auxiliary tensors.
const (
	// ClientModel is a client's model as evaluated (methods with personal models).
	ClientModel = "model"
	// ClientPersonal is a client's personal state.
	ClientPersonal = "personal"
	// ClientMask is a client's mask bundle.
	ClientMask = "mask"
	// ClientAux prefixes a method's auxiliary per-client tensors ("aux/<slot>").
	ClientAux = "aux"
)

// ClientOutput names client c's blob of a kind ("personal/00003", "model/00003"): the one
// naming of per-client blobs, for checkpoints and the train stage's outputs.
func ClientOutput(kind string, c int) string { return fmt.Sprintf("%s/%05d", kind, c) }

// TensorOutput reports whether a train output is, by its name, a tensor list or mask
// bundle (the global model, the per-client models, personal states, masks and auxiliary
// tensors) rather than a table.
func TensorOutput(name string) bool {
	if name == OutTrainGlobal {
		return true
	}
	for _, p := range []string{ClientModel, ClientPersonal, ClientMask, ClientAux} {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}
