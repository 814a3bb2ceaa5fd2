package results

import "testing"

func TestMetricCodec(t *testing.T) {
	rows := []Metric{{Round: 2, Client: 0, Split: "train", Loss: 0.5, Accuracy: 0.75, Samples: 40},
		{Round: 2, Client: 1, Split: "test", Loss: 1.25, Accuracy: 0.5, Samples: 10}}
	meta := map[string]string{"round": "2"}
	checkCodec(t, rows, meta, ref(meta, i64("round", 2, 2), i64("client", 0, 1), str("split", "train", "test"),
		f64("loss", 0.5, 1.25), f64("accuracy", 0.75, 0.5), i64("samples", 40, 10)))
	r, c, ok := rows[1].TestRow()
	if r != 2 || !ok || c != (Client{Client: 1, Samples: 10, Loss: 1.25, Accuracy: 0.5}) {
		t.Errorf("TestRow = %d %+v %v", r, c, ok)
	}
	if _, _, ok := rows[0].TestRow(); ok {
		t.Error("a train row is a test row")
	}
}

// The selection table stores the personalized fraction beside the counts; decoding
// ignores it (it follows from them).
func TestSelectionCodec(t *testing.T) {
	rows := []Selection{{Round: 1, Client: 3, Tensor: "fc.weight", Personalized: 1, Total: 4, Active: 4, Overlap: 3},
		{Round: 1, Client: 3, Tensor: "empty", Personalized: 0, Total: 0}}
	checkCodec(t, rows, nil, ref(nil, i64("round", 1, 1), i64("client", 3, 3), str("tensor", "fc.weight", "empty"),
		i64("personalized", 1, 0), i64("total", 4, 0), i64("mask_active", 4, 0), i64("mask_overlap", 3, 0),
		f64("fraction", 0.25, 0), f64("overlap_fraction", 0.75, 0)))
	if f := rows[0].Fraction(); f != 0.25 {
		t.Errorf("Fraction = %v", f)
	}
}

func TestMaskIoUCodec(t *testing.T) {
	checkCodec(t, []MaskIoU{{Tensor: "conv1.weight", ClientA: 0, ClientB: 2, IoU: 0.125}}, nil,
		ref(nil, str("tensor", "conv1.weight"), i64("client_a", 0), i64("client_b", 2), f64("iou", 0.125)))
}

func TestCommCodec(t *testing.T) {
	checkCodec(t, []Comm{{Round: 1, Client: 4, Down: 1 << 40, Up: 9}}, nil,
		ref(nil, i64("round", 1), i64("client", 4), i64("bytes_down", 1<<40), i64("bytes_up", 9)))
}

func TestWorkCodec(t *testing.T) {
	checkCodec(t, []Work{{Round: 3, Client: 1, Samples: 64, FLOPs: 1.5e9}}, nil,
		ref(nil, i64("round", 3), i64("client", 1), i64("samples", 64), f64("flops", 1.5e9)))
}

func TestCostCodec(t *testing.T) {
	checkCodec(t, []Cost{{Client: 2, MBDown: 0.5, MBUp: 0.25, Samples: 300, FLOPs: 2e12, RoundsSelected: 7}}, nil,
		ref(nil, i64("client", 2), f64("mb_down", 0.5), f64("mb_up", 0.25), i64("samples", 300), f64("flops", 2e12), i64("rounds", 7)))
}
