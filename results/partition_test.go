package results

import "testing"

func TestAssignmentCodec(t *testing.T) {
	meta := map[string]string{"dataset_digest": "abc", "clients": "2"}
	checkCodec(t, []Assignment{{Client: 0, Split: "train", Sample: 5, Label: 1}, {Client: 1, Split: "test", Sample: 2, Label: 9}}, meta,
		ref(meta, i64("client", 0, 1), str("split", "train", "test"), i64("sample", 5, 2), i64("label", 1, 9)))
}
