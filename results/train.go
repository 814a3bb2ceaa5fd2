package results

// The tables of a train stage (stages/train writes them; stages/train_kind.go stores them
// under the output names given below).

// Metric is one row of a train stage's `metrics` table: one client's loss and accuracy
// on one split at one evaluation round. The table's metadata holds the last round trained
// ("round"), which a checkpoint resumes from.
type Metric struct {
	Round    int     `arrow:"round"`
	Client   int     `arrow:"client"`
	Split    string  `arrow:"split"` // "train", "test" (before fine-tuning) or SplitTestFT
	Loss     float64 `arrow:"loss"`
	Accuracy float64 `arrow:"accuracy"`
	Samples  int     `arrow:"samples"`
}

// SplitTestFT labels the metric rows of a test split evaluated after fine-tuning (only for
// runs that fine-tune; "test" rows are always the model the method holds).
const SplitTestFT = "test_ft"

// TestRow exposes a metric row to summary.BestOf: its round and result, and whether it
// is a test-split evaluation before fine-tuning.
func (m Metric) TestRow() (int, Client, bool) {
	return m.Round, Client{Client: m.Client, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}, m.Split == "test"
}

// FTRow exposes a metric row to summary.BestOfFT: whether it is a test-split evaluation
// after fine-tuning.
func (m Metric) FTRow() (int, Client, bool) {
	return m.Round, Client{Client: m.Client, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}, m.Split == SplitTestFT
}

// Selection is one row of the `selection` table (FedOBP Fig. 5): how many entries of a
// tensor a client personalizes at a round. The stored table adds computed columns,
// fraction = personalized / max(total, 1) and overlap_fraction = mask_overlap /
// max(mask_active, 1).
type Selection struct {
	Round        int    `arrow:"round"`
	Client       int    `arrow:"client"`
	Tensor       string `arrow:"tensor"`
	Personalized int    `arrow:"personalized"`
	Total        int    `arrow:"total"`
	// Active and Overlap, for methods with a personal and a global mask (DM-PFL), are
	// |m_c| and |m_c ∩ m_g| on the tensor (0 elsewhere; tables written before them lack
	// the columns).
	Active  int `arrow:"mask_active,optional"`
	Overlap int `arrow:"mask_overlap,optional"`
}

// Fraction is the personalized share of the tensor's entries.
func (s Selection) Fraction() float64 {
	return float64(s.Personalized) / float64(max(s.Total, 1))
}

// OverlapFraction is |m_c ∩ m_g| / |m_c| (0 where the method has no such masks).
func (s Selection) OverlapFraction() float64 {
	return float64(s.Overlap) / float64(max(s.Active, 1))
}

func (s Selection) computed() ([]string, []float64) {
	return []string{"fraction", "overlap_fraction"}, []float64{s.Fraction(), s.OverlapFraction()}
}

// MaskIoU is one row of the `mask_iou` table (FedSelect Fig. 4): the intersection over
// union of two clients' final masks on one tensor; NaN (undefined) when both are empty.
type MaskIoU struct {
	Tensor  string  `arrow:"tensor"`
	ClientA int     `arrow:"client_a"`
	ClientB int     `arrow:"client_b"`
	IoU     float64 `arrow:"iou"`
}

// Comm is one row of the `comm` table: one client's communication in one round, counting
// 4 bytes per float32 value and one bit per mask entry sent.
type Comm struct {
	Round  int   `arrow:"round"`
	Client int   `arrow:"client"`
	Down   int64 `arrow:"bytes_down"`
	Up     int64 `arrow:"bytes_up"`
}

// Work is one row of the `work` table: one client's training computation in one round.
type Work struct {
	Round   int     `arrow:"round"`
	Client  int     `arrow:"client"`
	Samples int64   `arrow:"samples"`
	FLOPs   float64 `arrow:"flops"`
}

// Cost is one row of the `cost` table: one client's total cost over a run (DM-PFL
// Table 4).
type Cost struct {
	Client         int     `arrow:"client"`
	MBDown         float64 `arrow:"mb_down"` // megabytes (10^6 bytes) received
	MBUp           float64 `arrow:"mb_up"`   // megabytes sent
	Samples        int64   `arrow:"samples"`
	FLOPs          float64 `arrow:"flops"`
	RoundsSelected int     `arrow:"rounds"`
}
