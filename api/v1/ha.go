package v1

import "time"

// HAStatus is GET /v1/ha: a replica's view of the replicated colocd
// (package ha). The replica that answers fills its own fields; Members
// are every replica as each published itself in ZooKeeper.
type HAStatus struct {
	ID                    string     `json:"id"`
	URL                   string     `json:"url"`
	Role                  string     `json:"role"` // leader, follower or disconnected
	Epoch                 uint64     `json:"epoch"`
	Applied               uint64     `json:"applied_index"`
	LeaderID              string     `json:"leader_id"`
	LeaderURL             string     `json:"leader_url"`
	LeaderApplied         uint64     `json:"leader_applied_index"`
	Lag                   uint64     `json:"lag"`
	Session               string     `json:"session,omitempty"`
	SessionTimeoutSeconds float64    `json:"session_timeout_seconds"`
	TermsWon              uint64     `json:"terms_won"`
	Root                  string     `json:"root"`
	Members               []HAMember `json:"members"`
}

// HAMember is one replica as it published itself.
type HAMember struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Role      string    `json:"role"`
	Epoch     uint64    `json:"epoch"`
	Applied   uint64    `json:"applied_index"`
	UpdatedAt time.Time `json:"updated_at"`
}
