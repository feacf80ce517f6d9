package main

import "fmt"

// modelSize says a model's size as features and parameters, apart: a
// model with an intercept (or standardized features, or several outputs)
// has more parameters than its data has features ("30 features, 31
// parameters").
func modelSize(features, params int) string {
	f := "features"
	if features == 1 {
		f = "feature"
	}
	return fmt.Sprintf("%d %s, %d parameters", features, f, params)
}
