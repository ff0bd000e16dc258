package checks

import (
	"bytes"
	"fmt"
)

// Validity is a check's verdict. Its zero value is Unknown, so a result that
// was never judged never reads as valid.
type Validity uint8

// The verdicts. In JSON they are true, false and "unknown", as in Jepsen.
const (
	Unknown Validity = iota
	True
	False
)

// String returns "true", "false" or "unknown".
func (v Validity) String() string {
	switch v {
	case True:
		return "true"
	case False:
		return "false"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Validity(%d)", uint8(v))
}

// MarshalJSON writes true, false or "unknown".
func (v Validity) MarshalJSON() ([]byte, error) {
	switch v {
	case True:
		return []byte("true"), nil
	case False:
		return []byte("false"), nil
	case Unknown:
		return []byte(`"unknown"`), nil
	}
	return nil, fmt.Errorf("marshal validity: bad value %d", uint8(v))
}

// UnmarshalJSON reads true, false or "unknown"; null leaves v unchanged.
func (v *Validity) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*v = True
	case "false":
		*v = False
	case `"unknown"`:
		*v = Unknown
	case "null":
	default:
		return fmt.Errorf("unmarshal validity: got %s, want true, false or \"unknown\"", b)
	}
	return nil
}

// Compose combines verdicts as Jepsen does: false beats unknown beats true.
// The composition of no verdicts is True.
func Compose(vs ...Validity) Validity {
	out := True
	for _, v := range vs {
		switch {
		case v == False:
			return False
		case v != True:
			out = Unknown
		}
	}
	return out
}
