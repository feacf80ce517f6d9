package dataset

// Column returns the 1-based column of the data file whose header names
// name, a feature of a CSV read (the file's own counting, as an editor or a
// spreadsheet shows it, the label and id columns included), or 0 for
// another format or a name that is not a feature column of the file.
func (r *Reader) Column(name string) int {
	cs, ok := r.src.(*csvSource)
	if !ok {
		return 0
	}
	for _, c := range cs.features {
		if cs.names[c] == name {
			return c + 1
		}
	}
	return 0
}
