package pipeline

// Deficits returns a copy of the fairness deficit per group (nil when
// fairness is off), for tests.
func (p *Pipeline) Deficits() map[string]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fair == nil {
		return nil
	}
	out := make(map[string]float64, len(p.fair.deficit))
	for g, d := range p.fair.deficit {
		out[g] = d
	}
	return out
}

// The external tests' names for unexported constants.
const (
	DefaultTailMargin = defaultTailMargin
	ShapeExponential  = shapeExponential
	ShapeLinear       = shapeLinear
	ShapeNear         = shapeNear
)

// The external tests' names for unexported variables and functions.
var (
	AdmitQueues = admitQueues
)

// The external tests' names for unexported types.
type (
	Guarantee      = guarantee
	PreferenceMode = preferenceMode
	Shape          = shape
)
