package results

// Assignment is one row of a partition stage's `assignment` table: one sample of the
// pooled dataset, the client it belongs to, and the split there ("train" or "test"). The
// table's metadata holds the dataset's digest ("dataset_digest") and the number of
// clients ("clients").
type Assignment struct {
	Client int    `arrow:"client"`
	Split  string `arrow:"split"`
	Sample int    `arrow:"sample"`
	Label  int    `arrow:"label"`
}
