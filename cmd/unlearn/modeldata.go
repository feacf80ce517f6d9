package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/stream"
)

// intoModel describes an existing model that a command reads data into
// (ingest, evaluate, predict): its loss and the contract of its data. The
// data read must have the model's loss (kind, d, λ) and fit its contract
// (format, CSV feature columns, classes, IDX scale and shape).
type intoModel struct {
	// whose names the model in messages: "the store's", "the model's".
	whose string
	// contract is the model's data contract, nil when it records none.
	contract *model.Contract
	// kind is the model's loss kind.
	kind stream.Kind
	// byPosition is --force-features: the data's features are taken by
	// position (model.CheckOptions.ByPosition).
	byPosition bool
}

// forceFeaturesHelp is the help of --force-features.
const forceFeaturesHelp = "take the data's features by position: accept other CSV column names, another format or image shape with the model's d (the classes and the IDX scale are checked all the same)"

// contractDefaults sets in o, for each reading option the command line
// does not give, the model contract's value, so that a user need not
// repeat how the model's data was read: --classes, and for data of the
// model's format the CSV --label, --id and --exclude, the CSV or LIBSVM
// --feature-scale and the IDX --scale.
// A flag given explicitly stays; the contract check then names it if it
// makes the data differ from the model's.
func (in intoModel) contractDefaults(fl *pflag.FlagSet, o *dataset.Options, path string) {
	c := in.contract
	if c == nil {
		return
	}
	f, err := dataset.DetectFormat(path, *o)
	if err != nil && !fl.Changed("format") {
		o.Format, f = c.Format, c.Format // the name does not tell: the model's
	}
	if !fl.Changed("classes") && len(c.Classes) > 0 {
		o.Classes = slices.Clone(c.Classes)
	}
	if f != c.Format {
		return
	}
	if (f == dataset.CSV || f == dataset.LIBSVM) && !fl.Changed("feature-scale") {
		o.FeatureScale = slices.Clone(c.FeatureScale)
	}
	switch f {
	case dataset.CSV:
		if !fl.Changed("label") {
			o.Label = c.Label
		}
		if !fl.Changed("id") {
			o.ID = c.ID
		}
		if !fl.Changed("exclude") {
			o.Exclude = slices.Clone(c.Exclude)
		}
	case dataset.IDX:
		if !fl.Changed("scale") {
			o.Scale = c.Scale
		}
	}
}

// checkContract checks the contract of data read into the model — a data
// file's (data, its reader: read with the data flags, given by --data) or
// a stream file's (data nil; given by --flag, or as an argument when flag
// is "") — against the model's. A data file's columns are named the file's
// way (1-based column number and header name). What cannot be checked
// is said on note: a model or a stream that records no contract.
func (in intoModel) checkContract(note io.Writer, flag, path string, hdr stream.Header, data *dataset.Reader) error {
	fromData := data != nil
	var column func(string) int
	if fromData {
		column = data.Column
	}
	dc, err := model.ContractOf(hdr)
	if err != nil {
		return flagError(flag, "%s: %v", path, err)
	}
	switch {
	case in.contract == nil && fromData:
		fmt.Fprintf(note, "note: %s records no data contract (it was not made from a data file): only its loss (kind, d, λ) is checked against %s\n", trimWhose(in.whose), path)
		return nil
	case in.contract == nil:
		return nil
	case dc == nil:
		fmt.Fprintf(note, "note: %s records no data source: only its loss (kind, d, λ) is checked against %s data contract\n", path, in.whose)
		return nil
	}
	if err := in.contract.Check(dc, model.CheckOptions{ByPosition: in.byPosition, Kind: in.kind, Column: column}); err != nil {
		what := path
		if flag != "" {
			what = "--" + flag + " " + path
		}
		return usageError{fmt.Errorf("%s: %w%s", what, err, mismatchHint(err, fromData))}
	}
	return nil
}

// trimWhose turns "the store's" into "the store".
func trimWhose(whose string) string {
	if len(whose) > 2 && whose[len(whose)-2:] == "'s" {
		return whose[:len(whose)-2]
	}
	return whose
}

// mismatchHint says which flag changes what the data has, for a contract
// mismatch of a data file read with the data flags (fromData); a stream
// file's contract was fixed when it was converted.
func mismatchHint(err error, fromData bool) string {
	var me *model.MismatchError
	if !errors.As(err, &me) {
		return ""
	}
	if !fromData {
		switch me.Field {
		case "features", "format", "shape":
			return "; --force-features takes its features by position if they are the model's"
		}
		return "; the stream was converted so: convert the data file again as the model reads it"
	}
	switch me.Field {
	case "classes":
		return "; omit --classes to read the data with the model's"
	case "scale":
		return "; omit --scale to read the data with the model's"
	case "feature_scale":
		return "; omit --feature-scale to read the data with the model's declared scale"
	case "features":
		return "; --exclude COLUMN for a column that is not a feature, or --force-features if the columns are the model's features under other names"
	}
	if me.Field == "format" && strings.Contains(me.Want+me.Got, "IDX") {
		return "; give it " + me.Want + " (the format the model was trained on)"
	}
	return "; --force-features takes its features by position if they are the model's"
}

// openData opens the data file path (given by --data) to be read into the
// model. Data of another format than the model's contract is refused first,
// naming both formats — not with what reading it in that format would
// lack (a CSV --label) — unless --force-features takes it by position.
func (in intoModel) openData(path string, o dataset.Options) (stream.Header, *dataset.Reader, error) {
	if c := in.contract; c != nil && !in.byPosition {
		if f, err := dataset.DetectFormat(path, o); err == nil && f != c.Format {
			err := c.Check(&model.Contract{Format: f, Classes: c.Classes}, model.CheckOptions{Kind: in.kind})
			if err != nil {
				return stream.Header{}, nil, usageError{fmt.Errorf("--data %s: %w%s", path, err, mismatchHint(err, true))}
			}
		}
	}
	return openData(path, o)
}
