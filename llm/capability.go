package llm

// Optional capabilities of a Model, found through wrappers.
//
// A model that wraps another (Priced, a recorder, a catalog entry)
// implements Unwrapper, and the helpers below walk the chain to find the first
// model that has a capability, the way http.ResponseController finds a
// Flusher through middleware: a wrapper never forwards a capability by hand,
// so none is lost.
//
// A model that wraps several (Fallback) has an Unwrap method that returns
// them all, Unwrap() []Model, as an error that wraps several does; As looks
// through them in order, depth first. Such a model answers itself for the
// capabilities whose meaning over several models is not the first one's:
// Fallback reports the price, base URL and native tools of the set (see
// Fallback).

// Unwrapper is a Model that wraps another.
type Unwrapper interface {
	// Unwrap returns the wrapped model.
	Unwrap() Model
}

// BaseURLer is a Model that talks to a server at a base URL.
type BaseURLer interface {
	BaseURL() string
}

// ModelIDer is a Model set to ask for one model of its server (a catalog
// entry): what tells the models of a server apart, as a memory of what
// each accepts (NativeTools) must.
type ModelIDer interface {
	ModelID() string
}

// ModelIDOf returns the model id m asks for, found through wrappers; ""
// when it has none.
func ModelIDOf(m Model) string {
	if x, ok := As[ModelIDer](m); ok {
		return x.ModelID()
	}
	return ""
}

// Pricer is a Model that knows its price.
type Pricer interface {
	Price() Price
}

// maxUnwrap bounds the walk down a chain of wrappers, against a cycle.
const maxUnwrap = 64

// As finds the first model in m's chain of wrappers (m itself first, then
// what it wraps, depth first) that has the capability T.
func As[T any](m Model) (T, bool) {
	budget := maxUnwrap
	return as[T](m, &budget)
}

// as is As with a budget of models to look at, shared by the branches of a
// model that wraps several.
func as[T any](m Model, budget *int) (T, bool) {
	var zero T
	for m != nil && *budget > 0 {
		*budget--
		if c, ok := m.(T); ok {
			return c, true
		}
		switch u := m.(type) {
		case Unwrapper:
			m = u.Unwrap()
		case interface{ Unwrap() []Model }:
			for _, inner := range u.Unwrap() {
				if c, ok := as[T](inner, budget); ok {
					return c, true
				}
			}
			return zero, false
		default:
			return zero, false
		}
	}
	return zero, false
}

// BaseURLOf returns the base URL of the server m talks to, found through
// wrappers; "" when it has none.
func BaseURLOf(m Model) string {
	if b, ok := As[BaseURLer](m); ok {
		return b.BaseURL()
	}
	return ""
}

// PriceOf returns m's price, found through wrappers.
func PriceOf(m Model) (Price, bool) {
	if p, ok := As[Pricer](m); ok {
		return p.Price(), true
	}
	return Price{}, false
}

// ProviderNamer is a Model that knows who serves it, named as the
// OpenTelemetry GenAI conventions name providers (gen_ai.provider.name):
// "openai", "anthropic", "gcp.gemini", "ollama", "deepseek", "groq".
type ProviderNamer interface {
	ProviderName() string
}

// ProviderOf returns the name of m's provider, found through wrappers (a
// catalog entry names its provider before its client does); "" when none
// is known: an OpenAI-compatible server that is not OpenAI's says nothing
// of what it is.
func ProviderOf(m Model) string {
	if p, ok := As[ProviderNamer](m); ok {
		return p.ProviderName()
	}
	return ""
}
