// Package otlpcheck checks ptk's OTLP export against a real receiver: the
// OpenTelemetry Collector's otlpreceiver, whose module graph is large and
// stays out of ptk's own go.mod. It has tests only.
package otlpcheck
