// Package attemptdb converts agentplay/v1 maps into AttemptDB Event v1 JSON
// lines (capture_mode metadata_only) and checks streams against the rules
// of `attempt conformance`.
package attemptdb

// Event is one AttemptDB Event v1 line, as this exporter writes it.
type Event struct {
	EventID           string         `json:"event_id"`
	SchemaVersion     int            `json:"schema_version"`
	DeviceID          string         `json:"device_id"`
	SourceSeq         uint64         `json:"source_seq"`
	ObservedAt        int64          `json:"observed_at"`
	CapturedAt        int64          `json:"captured_at"`
	Provider          string         `json:"provider"`
	AdapterVersion    string         `json:"adapter_version"`
	CaptureMode       string         `json:"capture_mode"`
	ProviderEventName string         `json:"provider_event_name"`
	Kind              string         `json:"kind"`
	Project           Project        `json:"project"`
	SessionID         string         `json:"session_id"`
	ProviderSessionID string         `json:"provider_session_id"`
	ProviderTurnID    string         `json:"provider_turn_id,omitempty"`
	SpanID            string         `json:"span_id,omitempty"`
	ParentSpanID      string         `json:"parent_span_id,omitempty"`
	Agent             *Agent         `json:"agent,omitempty"`
	Tool              *Tool          `json:"tool,omitempty"`
	Outcome           *Outcome       `json:"outcome,omitempty"`
	DurationMs        *int64         `json:"duration_ms,omitempty"`
	Attrs             map[string]any `json:"attrs,omitempty"`
}

// Project is the event's project block.
type Project struct {
	ProjectID string `json:"project_id"`
	Root      string `json:"root"`
	Name      string `json:"name"`
}

// Agent is the event's agent block.
type Agent struct {
	AgentID         string `json:"agent_id,omitempty"`
	ProviderAgentID string `json:"provider_agent_id,omitempty"`
	AgentType       string `json:"agent_type,omitempty"`
	ParentAgentID   string `json:"parent_agent_id,omitempty"`
	Model           string `json:"model,omitempty"`
}

// Tool is the event's tool block.
type Tool struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	CallID   string `json:"call_id,omitempty"`
}

// Outcome is the event's outcome block.
type Outcome struct {
	Status   string `json:"status"`
	Class    string `json:"class,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
}
