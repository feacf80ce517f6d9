package model

import "testing"

// OptionCase and OptionCases let the external tests use the learners of
// every option (helpers_test.go).
type OptionCase = optionCase

func OptionCases(t testing.TB) []OptionCase { return optionCases(t) }
