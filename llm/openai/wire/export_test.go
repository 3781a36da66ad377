package wire

// The one-pass decoders, for the tests that hold them to encoding/json.
var DecodeRequest = decodeRequest

func DecodeCompletion(data []byte, c *Completion) bool { return decodeCompletion(data, c, nil) }
