package responses

// DecodeRequest is the one-pass decoder, for the tests that hold it to
// encoding/json.
var DecodeRequest = decodeRequest
