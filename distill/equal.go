package distill

import (
	"encoding/json"

	scorer "github.com/ptkit/ptk/ptool/score"
)

// Equal reports whether two JSON values are equal as JSON Schema compares
// them (enum, const): numbers by value (1 equals 1.0), objects whatever
// the order of their keys, arrays element by element. Invalid JSON is
// equal to nothing. It is score.Equal, the scorer 'ptk ptool eval' shares.
func Equal(a, b json.RawMessage) bool { return scorer.Equal(a, b) }

// canonical is a JSON value's text such that two values are Equal exactly
// when their canonical texts are equal (score.Canonical).
func canonical(raw json.RawMessage) (string, bool) { return scorer.Canonical(raw) }
