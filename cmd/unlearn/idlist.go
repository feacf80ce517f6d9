package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// A deletion request must name every id it means, or be refused: the ids
// and keys of forget are read here, whole, before the store is touched.
//
//   - --ids: integers separated by commas, blanks or line breaks (LF or
//     CRLF), so that --ids "$(cat ids.txt)" works; an empty item between
//     two commas, or an item that is not an integer, is an error naming
//     it and its line.
//   - --keys: CSV (RFC 4180): records on any number of lines, every field a
//     key, so a key holding a comma, a quote or a line break is quoted;
//     blank lines are skipped; an empty field is an error.
//   - --ids-from, --keys-from FILE ('-': standard input): one id or one key
//     per line, the line taken literally (no CSV: a comma or a quote is part
//     of the key); blank lines are skipped.
//
// Every key and id is trimmed of surrounding blanks (a CR included), as
// ingest trims a CSV id cell; duplicates name the same row once.

// parseIDList reads ids from the value of flag.
func parseIDList(flag, value string) ([]int64, error) {
	var out []int64
	for ln, line := range strings.Split(value, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		for j, item := range strings.Split(line, ",") {
			toks := strings.Fields(item)
			if len(toks) == 0 {
				return nil, flagError(flag, "line %d, item %d is empty (ids are separated by commas, blanks or line breaks)", ln+1, j+1)
			}
			for _, tok := range toks {
				id, err := strconv.ParseInt(tok, 10, 64)
				if err != nil {
					return nil, idError(flag, value, line, ln, tok, err)
				}
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// idError says why tok, on line ln (0-based) of a flag's value, is not an
// id: not a whole number, or out of range; the line is named when the
// value has several, the item's context when the line has several.
func idError(flag, value, line string, ln int, tok string, err error) error {
	what := "is not a whole number"
	if errors.Is(err, strconv.ErrRange) {
		what = "is out of range"
	}
	where := ""
	if strings.Contains(strings.TrimSpace(value), "\n") {
		where = fmt.Sprintf("line %d: ", ln+1)
	}
	msg := fmt.Sprintf("%s%q %s (an integer id)", where, tok, what)
	if t := strings.TrimSpace(line); t != tok {
		msg = fmt.Sprintf("%s%q %s (in %q)", where, tok, what, t)
	}
	return flagError(flag, "%s", msg)
}

// parseKeyList reads keys from the value of flag, as CSV.
func parseKeyList(flag, value string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(value))
	r.FieldsPerRecord = -1
	r.LazyQuotes = false
	var out []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, flagError(flag, "line %d, column %d: %v (a key holding a comma, a quote or a line break is quoted as in CSV: \"Doe, John\"; or give one key per line with --keys-from)", pe.StartLine, pe.Column, pe.Err)
			}
			return nil, flagError(flag, "%v", err)
		}
		line, _ := r.FieldPos(0)
		for i, f := range rec {
			k := strings.TrimSpace(f)
			if k == "" {
				return nil, flagError(flag, "line %d, key %d is empty", line, i+1)
			}
			out = append(out, k)
		}
	}
}

// readLines reads one id or key per line from the file name ('-':
// standard input), skipping blank lines; it returns the trimmed lines and
// their line numbers.
func readLines(flag, name string, stdin io.Reader) (lines []string, nums []int, err error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, flagError(flag, "%v", err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if n == 1 {
			l = strings.TrimPrefix(l, "\ufeff") // a byte order mark, as some editors write
		}
		if l = strings.TrimSpace(l); l != "" {
			lines, nums = append(lines, l), append(nums, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, flagError(flag, "%s: %v", name, err)
	}
	return lines, nums, nil
}

// readIDFile reads --ids-from: one integer per line.
func readIDFile(flag, name string, stdin io.Reader) ([]int64, error) {
	lines, nums, err := readLines(flag, name, stdin)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(lines))
	for i, l := range lines {
		if out[i], err = strconv.ParseInt(l, 10, 64); err != nil {
			return nil, flagError(flag, "%s, line %d: %q is not an integer id (one id per line)", name, nums[i], l)
		}
	}
	return out, nil
}

// readKeyFile reads --keys-from: one key per line, literally.
func readKeyFile(flag, name string, stdin io.Reader) ([]string, error) {
	lines, _, err := readLines(flag, name, stdin)
	return lines, err
}

// deletionInput is every id and key a forget names, read from its flags.
type deletionInput struct {
	ids  []int64
	keys []string
}

// readDeletion reads --ids, --keys, --ids-from and --keys-from (each
// repeatable); stdin is read for '-' (at most one of the two files).
func readDeletion(ids, keys []string, idsFrom, keysFrom string, stdin io.Reader) (deletionInput, error) {
	var in deletionInput
	if idsFrom == "-" && keysFrom == "-" {
		return in, flagError("keys-from", "standard input is already --ids-from")
	}
	for _, v := range ids {
		got, err := parseIDList("ids", v)
		if err != nil {
			return in, err
		}
		in.ids = append(in.ids, got...)
	}
	for _, v := range keys {
		got, err := parseKeyList("keys", v)
		if err != nil {
			return in, err
		}
		in.keys = append(in.keys, got...)
	}
	if idsFrom != "" {
		got, err := readIDFile("ids-from", idsFrom, stdin)
		if err != nil {
			return in, err
		}
		if len(got) == 0 {
			return in, flagError("ids-from", "%s names no id", idsFrom)
		}
		in.ids = append(in.ids, got...)
	}
	if keysFrom != "" {
		got, err := readKeyFile("keys-from", keysFrom, stdin)
		if err != nil {
			return in, err
		}
		if len(got) == 0 {
			return in, flagError("keys-from", "%s names no key", keysFrom)
		}
		in.keys = append(in.keys, got...)
	}
	return in, nil
}

// idsHelp is what forget --help says of its ids and keys.
const idsHelp = `Naming the request: every id and key given is forgotten, or the command
refuses before anything changes.
  --ids 17,42      integers separated by commas, blanks or line breaks, so
                   --ids "$(cat ids.txt)" works; repeatable.
  --keys KEYS      string ids of CSV rows ingested with 'ingest --data' (for
                   example e-mail addresses), written as CSV: records on one
                   or more lines, every field a key; a key holding a comma, a
                   quote or a line break is quoted ("Doe, John"); repeatable.
  --ids-from FILE  one id per line ('-': standard input).
  --keys-from FILE one key per line, taken literally (a comma or a quote is
                   part of the key; '-': standard input). This is the form
                   for a list of keys kept in a file.
Ids and keys are trimmed of surrounding blanks (a CR included), as ingest
trims a CSV id cell; blank lines are skipped; an empty item is an error;
duplicates name one row. A key is a key, never an id: --keys 17 names the
row whose string id is "17", not id 17. A key not in the store (never
ingested, or already forgotten, since the key was erased then) is an error
naming it, and nothing changes; so is an id never ingested. --ids and --keys
may be given together.`

// checkComplete verifies that a forget's report accounts for every id
// asked: forgotten now or before. It guards the promise that a request is
// never silently partial.
func checkComplete(ids []int64, forgot, already []int64) error {
	done := map[int64]bool{}
	for _, id := range forgot {
		done[id] = true
	}
	for _, id := range already {
		done[id] = true
	}
	for _, id := range ids {
		if !done[id] {
			return fmt.Errorf("the forget's report does not account for id %d: the request may be incomplete; run 'unlearn status --check' and the forget again", id)
		}
	}
	return nil
}
