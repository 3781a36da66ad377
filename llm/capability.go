package llm

// Optional capabilities of a Model, found through wrappers.
//
// A model that wraps another (Priced, Fallback, a recorder, a catalog entry)
// implements Unwrapper, and the helpers below walk the chain to find the first
// model that has a capability, the way http.ResponseController finds a
// Flusher through middleware: a wrapper never forwards a capability by hand,
// so none is lost.

// Unwrapper is a Model that wraps another.
type Unwrapper interface {
	// Unwrap returns the wrapped model.
	Unwrap() Model
}

// BaseURLer is a Model that talks to a server at a base URL.
type BaseURLer interface {
	BaseURL() string
}

// Pricer is a Model that knows its price.
type Pricer interface {
	Price() Price
}

// maxUnwrap bounds the walk down a chain of wrappers, against a cycle.
const maxUnwrap = 64

// As finds the first model in m's chain of wrappers (m itself first) that
// has the capability T.
func As[T any](m Model) (T, bool) {
	for range maxUnwrap {
		if m == nil {
			break
		}
		if c, ok := m.(T); ok {
			return c, true
		}
		u, ok := m.(Unwrapper)
		if !ok {
			break
		}
		m = u.Unwrap()
	}
	var zero T
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
