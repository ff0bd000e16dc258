package nodes

import (
	"fmt"
	"sort"
	"time"
)

// Params are an algorithm's parameters, from the scenario's [params] table.
// Values are TOML values: strings, int64, float64, bool.
//
// The accessors return the default when a key is absent and an error that
// names the key when its value is of the wrong kind. Unused reports keys that
// were never asked for, so that a misspelt parameter is an error.
type Params struct {
	values map[string]any
	used   map[string]bool
}

// NewParams wraps a parameter table (nil is an empty one).
func NewParams(values map[string]any) *Params {
	return &Params{values: values, used: map[string]bool{}}
}

// Map returns the raw table.
func (p *Params) Map() map[string]any { return p.values }

// ParamError is a bad parameter value.
type ParamError struct {
	Key string
	Err string
}

func (e *ParamError) Error() string { return fmt.Sprintf("params.%s: %s", e.Key, e.Err) }

func (p *Params) get(key string) (any, bool) {
	p.used[key] = true
	v, ok := p.values[key]
	return v, ok
}

// Duration returns a duration parameter, written as a string like "150ms".
func (p *Params) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := p.get(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		if err != nil {
			return 0, &ParamError{key, fmt.Sprintf("bad duration %q (use a number with a unit, like \"150ms\")", x)}
		}
		if d < 0 {
			return 0, &ParamError{key, fmt.Sprintf("negative duration %q", x)}
		}
		return d, nil
	case time.Duration:
		return x, nil
	}
	return 0, &ParamError{key, fmt.Sprintf("want a duration string like \"150ms\", got %v", v)}
}

// PositiveDuration returns a duration parameter that must be more than zero
// (a period or a timeout).
func (p *Params) PositiveDuration(key string, def time.Duration) (time.Duration, error) {
	d, err := p.Duration(key, def)
	if err == nil && d <= 0 {
		err = &ParamError{key, fmt.Sprintf("must be more than zero, got %s", d)}
	}
	return d, err
}

// Int returns an integer parameter.
func (p *Params) Int(key string, def int) (int, error) {
	v, ok := p.get(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case int:
		return x, nil
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	}
	return 0, &ParamError{key, fmt.Sprintf("want an integer, got %v", v)}
}

// Float returns a number parameter.
func (p *Params) Float(key string, def float64) (float64, error) {
	v, ok := p.get(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	}
	return 0, &ParamError{key, fmt.Sprintf("want a number, got %v", v)}
}

// Bool returns a boolean parameter.
func (p *Params) Bool(key string, def bool) (bool, error) {
	v, ok := p.get(key)
	if !ok {
		return def, nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, &ParamError{key, fmt.Sprintf("want true or false, got %v", v)}
}

// String returns a string parameter.
func (p *Params) String(key string, def string) (string, error) {
	v, ok := p.get(key)
	if !ok {
		return def, nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", &ParamError{key, fmt.Sprintf("want a string, got %v", v)}
}

// Unused returns an error naming the first parameter (in sorted order) that
// no accessor asked for.
func (p *Params) Unused() error {
	var keys []string
	for k := range p.values {
		if !p.used[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	return &ParamError{keys[0], "unknown parameter for this algorithm"}
}
