package ptk

// Role says who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of the turn: the prose of an assistant turn (its
	// calls are in Calls), or the output of a tool for a tool turn.
	Content string `json:"content"`
	// Calls are the tool calls an assistant turn made, in order.
	Calls []Call `json:"calls,omitempty"`
	// CallID is, for a tool turn, the [Call.ID] it answers.
	CallID string `json:"call_id,omitempty"`
	// Tool is, for a tool turn, the name of the tool that produced it.
	Tool string `json:"tool,omitempty"`
	// IsError marks a tool turn that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Raw is, for an assistant turn read through the text protocol, the reply
	// exactly as the model wrote it (Content and Calls are what ptk read from
	// it). Replaying a conversation to the same model sends Raw, so that the
	// model sees its own words.
	Raw string `json:"raw,omitempty"`
	// Compacted, on a user turn ptk wrote when it compacted the
	// conversation (see package agent), counts the turns from the start of
	// the conversation that the turn's summary stands for. A model is sent
	// the summary in their place, then the turns after them; the turns stay
	// in the conversation, for people and the trace.
	Compacted int `json:"compacted,omitempty"`
}
