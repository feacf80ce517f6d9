package audit

import (
	"errors"
	"fmt"
)

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrConfig: a Config field out of range; the error is a *ConfigError
	// naming the field.
	ErrConfig = errors.New("invalid audit configuration")
	// ErrDim: the two worlds release artifacts of different lengths, or of
	// length 0.
	ErrDim = errors.New("the worlds' released artifacts differ in length")
	// ErrRelease: a mechanism failed or released a non-finite value; the
	// error names the world and the trial.
	ErrRelease = errors.New("release failed")
)

// ConfigError reports a Config field out of range. It matches ErrConfig
// with errors.Is.
type ConfigError struct {
	// Field is the Config field name, such as "Gamma".
	Field string
	// Value is the offending value, formatted.
	Value string
	// Want says what the field must be.
	Want string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("audit: Config.%s = %s: %s", e.Field, e.Value, e.Want)
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErr(field string, v any, want string) error {
	return &ConfigError{Field: field, Value: fmt.Sprint(v), Want: want}
}
