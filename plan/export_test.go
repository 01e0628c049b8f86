package plan

// The external tests' names for unexported constants.
const (
	ObjectiveDrain = objectiveDrain
	ObjectiveFlow  = objectiveFlow
	ObjectiveWork  = objectiveWork
)

// The external tests' name for an unexported variable or function.
var ErrUncertain = errUncertain

// The external tests' name for an unexported type.
type Objective = objective
