// Package dataset reads users' data sets — CSV, LIBSVM/svmlight and IDX
// (MNIST, Fashion-MNIST) files — as streams of insert events for the
// toolkit: a stream header (package stream) and an iterator over the
// events, for a logistic stream (labels mapped to ±1) or a ridge
// regression stream (real targets).
//
// [Open] is the one entry point: the converter (unlearn convert), the
// benchmark on real data (unlearn bench --data) and the model store's
// ingest all read through it. [Load] reads a whole file into a
// stream.History for consumers that need every event at once.
//
//	hdr, r, err := dataset.Open("breast_cancer.csv", dataset.Options{Label: "target"})
//	...
//	defer r.Close()
//	for {
//		e, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		...
//	}
//
// # Formats
//
// CSV (RFC 4180, read with encoding/csv): a header row of column names,
// then one row per sample. Options.Label names the label column (by name,
// or 1-based index); Options.ID an optional id column; every other column
// not in Options.Exclude is a feature, in file order (their names are
// kept in the header metadata "features").
//
// LIBSVM/svmlight (Chang and Lin, "LIBSVM: a library for support vector
// machines", 2011, data format in the package README; Joachims,
// svmlight's documentation): one sample per line, "label [qid:n]
// index:value …", with 1-based, strictly increasing indices and absent
// indices zero; "#" starts a comment. qid tokens are ignored and counted
// (Stats.QIDs). d is Options.D or the largest index in the file.
//
// IDX (LeCun, Cortes and Burges, "The MNIST database", file formats): an
// image file of unsigned bytes with 3 dimensions (n × rows × cols) and a
// label file with 1 (n); features are the pixels in row-major order
// divided by Options.Scale (255: features in [0, 1]). Options.Classes
// selects two classes, for example 0 and 6 (T-shirt/top and shirt in
// Fashion-MNIST; Xiao, Rasul and Vollgraf, 2017).
//
// Every format may be gzip-compressed (recognized by its magic bytes).
//
// # Labels and ids
//
// For a logistic stream labels must be 0/1 or −1/+1 (0 and 1 map to −1
// and +1; a file mixing 0 and −1 is an error), unless Options.Classes
// names two classes: the first maps to −1, the second to +1, and rows of
// other classes are skipped and counted (Stats.Skipped). For a regression
// stream the label is the real target y.
//
// A row's id is its 1-based data row number (the image number for IDX), or
// the CSV id column's integer. A CSV id column of strings maps each string
// to its row number; [Reader.Mapping] lists the pairs, and the converter
// writes them beside the stream ([MappingFile], [WriteMappingFile]), so a
// deletion request naming the original id can be turned into the stream
// id. The mapping depends only on the file, not on the shuffle.
//
// # Errors
//
// Nothing is dropped silently. An empty cell, a cell that is not a finite
// number, a label outside the allowed set, a repeated id, a malformed line
// or a truncated file is an error: a [PosError] that names the file and
// the line and column (CSV and LIBSVM; for a CSV cell also its 1-based
// field and header name, which the message gives instead of the byte
// column) or byte offset (IDX), wrapping
// [ErrSyntax], [ErrValue], [ErrLabel] or [ErrDuplicateID]. Bad options are
// [OptionError] values naming the field.
//
// # Order
//
// Without Options.Shuffle, rows come in file order and the file is
// streamed. With it, they come in the order of [Permutation] (a seeded
// Fisher–Yates shuffle) and Options.Limit sub-samples the first rows of
// that order — a seeded random subset — so a real data set becomes a
// stream in a reproducible random order.
package dataset
