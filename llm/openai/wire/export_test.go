package wire

// The one-pass decoders, for the tests that hold them to encoding/json.
func DecodeRequest(data []byte, r *Request) bool { return decodeRequest(data, r, nil) }

func DecodeCompletion(data []byte, c *Completion) bool { return decodeCompletion(data, c, nil) }

// FastChunk reads a chunk as ChunkReader.Read's fast path does, with no
// memory of a chunk before; false: left to the general decoder.
func FastChunk(data []byte, c *Completion) bool { return fastChunk(data, c, &chunkMemory{}) }

// Regions returns the bytes the reader remembers around the last chunk's
// choices.
func (r *ChunkReader) Regions() (before, after string) {
	return string(r.mem.before.bytes), string(r.mem.after.bytes)
}

// ToolsMemoSize is how many bytes of tools the decoder keeps.
func ToolsMemoSize() int { return toolsMemo.Size() }
