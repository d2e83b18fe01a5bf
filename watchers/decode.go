package watchers

import (
	"encoding/json"
	"errors"
)

// DecodeLenient decodes JSON into v as encoding/json does, but takes a
// value of another type than v's field (a number where a string id was
// expected, a string where an object was) as a field the log did not
// give, not as a record to drop: encoding/json fills every other field
// and skips those (leaving them as they were), and only malformed JSON
// is an error. An agent's log adds and retypes fields from version to
// version; one such field must not lose a message's usage and every tool
// call beside it.
func DecodeLenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}
