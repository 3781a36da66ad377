package otlp

import (
	"net/url"
	"os"
	"strings"
)

// envHeaders are the headers OTEL_EXPORTER_OTLP_TRACES_HEADERS, else
// OTEL_EXPORTER_OTLP_HEADERS, name: "key=value,key2=value2", each value
// URL-encoded, as the OpenTelemetry specification writes them. A pair
// without "=" is left out, as the SDK leaves it out.
func envHeaders() map[string]string {
	v, ok := os.LookupEnv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
	if !ok {
		v = os.Getenv("OTEL_EXPORTER_OTLP_HEADERS")
	}
	h := map[string]string{}
	for pair := range strings.SplitSeq(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if d, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
			h[k] = d
		}
	}
	return h
}
