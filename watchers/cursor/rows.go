package cursor

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// The row shapes of state.vscdb. Only the fields the map uses are declared;
// encoding/json skips the rest (text, richText, codeBlocks, context, …)
// without keeping it. Numbers are float64 because Cursor writes some times
// as fractions; a field of an unexpected type is left zero rather than
// failing the row (see decodeRow).

// composer is a composerData value (global cursorDiskKV, or one entry of a
// workspace's composer.composerData.allComposers).
type composer struct {
	ComposerID    string  `json:"composerId"`
	Version       float64 `json:"_v"`
	Type          string  `json:"type"` // "head": an index entry whose content lives elsewhere
	CreatedAt     float64 `json:"createdAt"`
	LastUpdatedAt float64 `json:"lastUpdatedAt"`
	Status        string  `json:"status"`
	ModelConfig   *struct {
		ModelName string `json:"modelName"`
	} `json:"modelConfig"`
	Headers []struct {
		BubbleID string  `json:"bubbleId"`
		Type     float64 `json:"type"`
	} `json:"fullConversationHeadersOnly"`
	// Conversation holds the bubbles inline (composers before the split
	// storage of 2025).
	Conversation []json.RawMessage `json:"conversation"`
	SubagentInfo *struct {
		ParentComposerID string `json:"parentComposerId"`
		ToolCallID       string `json:"toolCallId"`
	} `json:"subagentInfo"`
}

// bubble is one message or tool step of a composer.
type bubble struct {
	BubbleID  string          `json:"bubbleId"`
	Type      float64         `json:"type"` // 1 user, 2 assistant
	Text      string          `json:"text"` // measured, never kept
	CreatedAt json.RawMessage `json:"createdAt"`
	ModelInfo *struct {
		ModelName string `json:"modelName"`
	} `json:"modelInfo"`
	TokenCount *struct {
		InputTokens  float64 `json:"inputTokens"`
		OutputTokens float64 `json:"outputTokens"`
	} `json:"tokenCount"`
	TimingInfo *struct {
		ClientRPCSendTime float64 `json:"clientRpcSendTime"`
		ClientSettleTime  float64 `json:"clientSettleTime"`
		ClientEndTime     float64 `json:"clientEndTime"`
	} `json:"timingInfo"`
	Thinking *struct {
		Text string `json:"text"`
	} `json:"thinking"`
	// Element counts only: struct{} keeps nothing of each element.
	AllThinkingBlocks  []struct{}  `json:"allThinkingBlocks"`
	ThinkingDurationMs float64     `json:"thinkingDurationMs"`
	IsThought          bool        `json:"isThought"`
	Images             []struct{}  `json:"images"`
	ToolFormerData     *toolFormer `json:"toolFormerData"`

	// Set by measure, which then drops the text and the raw tool data.
	textRunes, promptChars, promptURLs int
	thought                            bool
	step                               *toolStep
}

// measure keeps the lengths and flags the map needs and drops the text, so
// that no text outlives the decoding of its row.
func (b *bubble) measure() *bubble {
	b.textRunes = utf8.RuneCountInString(b.Text)
	b.promptChars, b.promptURLs = promptShape(b.Text)
	b.thought = (b.Thinking != nil && b.Thinking.Text != "") || len(b.AllThinkingBlocks) > 0 ||
		b.IsThought || b.ThinkingDurationMs > 0
	if tf := b.ToolFormerData; tf != nil && tf.Name != "" {
		b.step = newToolStep(tf)
	}
	b.Text, b.Thinking, b.ToolFormerData = "", nil, nil
	return b
}

// toolFormer is the tool call of an assistant bubble, as stored. Bubbles
// without a tool carry a placeholder ({"additionalData":{"status":"error"}})
// that has no name and is not a call.
type toolFormer struct {
	Name           string          `json:"name"`
	ToolCallID     string          `json:"toolCallId"`
	Status         string          `json:"status"`
	RawArgs        json.RawMessage `json:"rawArgs"`
	Params         json.RawMessage `json:"params"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
	UserDecision   string          `json:"userDecision"`
	AdditionalData *struct {
		Status string `json:"status"`
	} `json:"additionalData"`
}

// chatTab is one tab of the legacy chat panel
// (ItemTable workbench.panel.aichat.view.aichat.chatdata).
type chatTab struct {
	TabID        string  `json:"tabId"`
	LastSendTime float64 `json:"lastSendTime"`
	Bubbles      []struct {
		ID             string     `json:"id"`
		Type           string     `json:"type"` // user, ai
		Text           string     `json:"text"`
		ModelType      string     `json:"modelType"`
		SelectedImages []struct{} `json:"selectedImages"`
	} `json:"bubbles"`
}

// decodeRow decodes a row value leniently: a field of an unexpected type is
// left zero (encoding/json goes on past it), only malformed JSON fails.
// The error names the problem, never the content.
func decodeRow(raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	if err == nil || errors.As(err, &te) {
		return nil
	}
	return errors.New("malformed JSON value")
}

// decodeComposer decodes a composerData value.
func decodeComposer(raw []byte) (*composer, error) {
	var c composer
	if err := decodeRow(raw, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// decodeBubble decodes a bubbleId value or an inline conversation entry.
func decodeBubble(raw []byte) (*bubble, error) {
	var b bubble
	if err := decodeRow(raw, &b); err != nil {
		return nil, err
	}
	return b.measure(), nil
}

// decodeChatData decodes the legacy chat panel value into bubbles per tab.
func decodeChatData(raw []byte) ([]chatTab, error) {
	var d struct {
		Tabs []chatTab `json:"tabs"`
	}
	if err := decodeRow(raw, &d); err != nil {
		return nil, err
	}
	return d.Tabs, nil
}

// tabBubbles maps legacy chat bubbles onto composer bubbles.
func tabBubbles(t chatTab) []*bubble {
	out := make([]*bubble, 0, len(t.Bubbles))
	for _, cb := range t.Bubbles {
		b := &bubble{BubbleID: cb.ID, Text: cb.Text, Images: cb.SelectedImages}
		b.measure()
		switch cb.Type {
		case "user":
			b.Type = 1
		case "ai":
			b.Type = 2
		}
		if cb.ModelType != "" {
			b.ModelInfo = &struct {
				ModelName string `json:"modelName"`
			}{cb.ModelType}
		}
		out = append(out, b)
	}
	return out
}

// epochMs accepts a time only if it is a plausible Unix-ms value (after
// 2001): Cursor's clientStartTime is a performance counter in some builds.
func epochMs(f float64) int64 {
	if f < 1e12 || f > 1e14 {
		return 0
	}
	return int64(f)
}

// time returns the bubble's own time in Unix ms, or 0: createdAt (ISO
// string or number), else the request's send time.
func (b *bubble) time() int64 {
	if len(b.CreatedAt) > 0 {
		var s string
		if json.Unmarshal(b.CreatedAt, &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.UnixMilli()
			}
		}
		var f float64
		if json.Unmarshal(b.CreatedAt, &f) == nil {
			if t := epochMs(f); t > 0 {
				return t
			}
		}
	}
	if ti := b.TimingInfo; ti != nil {
		return epochMs(ti.ClientRPCSendTime)
	}
	return 0
}

// latency is the time from sending the request to its settling, or -1.
func (b *bubble) latency() int64 {
	ti := b.TimingInfo
	if ti == nil {
		return -1
	}
	send := epochMs(ti.ClientRPCSendTime)
	end := epochMs(ti.ClientSettleTime)
	if end == 0 {
		end = epochMs(ti.ClientEndTime)
	}
	if send == 0 || end < send {
		return -1
	}
	return end - send
}

func (b *bubble) model() string {
	if b.ModelInfo != nil {
		return servedModel(b.ModelInfo.ModelName)
	}
	return ""
}

// servedModel is a model name as Cursor records it, or "" for the Auto
// setting ("default", "auto"), which names no model: Cursor picks one per
// request and does not say which, so the map writes the model as unknown.
func servedModel(name string) string {
	name = strings.TrimSpace(name)
	switch strings.ToLower(name) {
	case "default", "auto":
		return ""
	}
	// A model's name, not whatever text a damaged or hostile store holds
	// there: an identifier, as every other agent's model names are
	// (three words of a store's text would pass for a display name).
	return watchers.Ident(name)
}

// toolStep is what a tool bubble contributes, reduced at decoding: the
// whitelisted input keys, the status, and the few facts of the result. The
// raw arguments and result are dropped with the row.
type toolStep struct {
	name, callID, status string
	inputs               []input // params, then rawArgs; whitelisted keys only
	outBytes             int64
	exitCode             *int
	rejected             bool
	cwd                  string // the terminal's resultingWorkingDirectory
	errClass             string // for a failed step
	output               string // a VCS command's output, to confirm a commit or PR
}

func newToolStep(tf *toolFormer) *toolStep {
	st := &toolStep{name: tf.Name, callID: tf.ToolCallID, status: strings.ToLower(tf.Status),
		outBytes: rawLen(tf.Result)}
	if st.status == "" && tf.AdditionalData != nil {
		st.status = strings.ToLower(tf.AdditionalData.Status)
	}
	if strings.EqualFold(tf.UserDecision, "rejected") {
		st.rejected = true
	}
	for _, raw := range []json.RawMessage{tf.Params, tf.RawArgs} {
		if in := decodeInput(raw).reduce(); len(in) > 0 {
			st.inputs = append(st.inputs, in)
		}
	}
	if st.status == "error" || st.status == "failed" || st.status == "failure" {
		st.errClass = redact.ErrorClass(rawText(tf.Error))
		if st.errClass == "" {
			st.errClass = "other"
		}
	}
	res := decodeInput(tf.Result)
	if v, ok := res["rejected"]; ok {
		var rej bool
		if json.Unmarshal(v, &rej) == nil && rej {
			st.rejected = true
		}
	}
	if v, ok := res["exitCodeV2"]; ok {
		var f float64
		if json.Unmarshal(v, &f) == nil {
			code := int(f)
			st.exitCode = &code
		}
	}
	st.cwd = res.str("resultingWorkingDirectory")
	if out := res.str("output"); out != "" {
		for _, in := range st.inputs {
			if cmd := in.str("command"); cmd != "" {
				if redact.ParseShell(cmd).VCS != nil {
					st.output = out
				}
				break
			}
		}
	}
	return st
}
