package wire

// The one-pass decoders, for the tests that hold them to encoding/json.
var (
	DecodeRequest    = decodeRequest
	DecodeCompletion = decodeCompletion
)
