// Package apiclienttest runs a real colocd API server (daemon/api over a
// queue.Store on a temporary bbolt file, a bandit.Learner, a profile.Model
// and a journal) on 127.0.0.1, for tests of API clients: package apiclient
// and the command-line client. Tests reach behind the API through the
// Server's fields (admit or park a job, train the learner).
//
// It is for tests only: nothing in a production build imports it.
package apiclienttest
