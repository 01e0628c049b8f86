package daemon

import (
	"fmt"
	"time"

	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

// yarnInfo is what colocd yarn info shows of how colocd reaches YARN,
// besides the ResourceManager's own answers: how the client authenticates
// and whose applications colocd submits, with which delegation tokens.
type yarnInfo struct {
	Auth       YarnAuth
	Submission YarnSubmission
}

// YarnAuth is how a ResourceManager client authenticates: simple auth's
// user, or Kerberos' principal and TGT.
type YarnAuth struct {
	Mode           string    `json:"mode"`           // simple or kerberos
	User           string    `json:"user,omitempty"` // simple: user.name, "" for none
	Principal      string    `json:"principal,omitempty"`
	Keytab         string    `json:"keytab,omitempty"`
	TGTStart       time.Time `json:"tgtStart,omitzero"` // the KDC's times
	TGTEnd         time.Time `json:"tgtEnd,omitzero"`
	RenewAt        time.Time `json:"renewAt,omitzero"`
	ServiceTickets []string  `json:"serviceTickets,omitempty"`
	// ClientCert is the certificate presented to https RMs and NMs
	// (yarn.cert_file); nil without one.
	ClientCert *YarnClientCert `json:"clientCert,omitempty"`
}

// YarnClientCert is the client certificate of yarn.cert_file the client
// loaded: whose it is, who signed it and until when it is valid.
type YarnClientCert struct {
	File     string    `json:"file"`
	Subject  string    `json:"subject"`
	Issuer   string    `json:"issuer"`
	NotAfter time.Time `json:"notAfter"`
}

// YarnSubmission is whose applications colocd submits (yarn.submit_as)
// and which delegation tokens it fetches at admission (yarn.tokens).
type YarnSubmission struct {
	SubmitAs string   `json:"submitAs"` // daemon or job_user
	RMToken  bool     `json:"rmToken"`
	HDFS     []string `json:"hdfsTokens,omitempty"` // each namespace's service (or first NameNode)
	Renewer  string   `json:"renewer,omitempty"`
	// AppUser is the user the RM names colocd's applications by
	// (yarn.app_user, or the principal's first component, or yarn.user);
	// empty with submit_as job_user (each job's user's).
	AppUser string `json:"appUser,omitempty"`
}

// ByJobUser reports whether each application is its job's user's
// (yarn.submit_as job_user), not colocd's own user's.
func (s YarnSubmission) ByJobUser() bool { return s.SubmitAs == string(yarncluster.SubmitAsJobUser) }

// InspectYarn is the yarnInfo of c, the client YarnClient built from cfg.
func InspectYarn(cfg Config, c *YarnRM) yarnInfo {
	a := yarnAuthOf(c)
	if leaf := c.ClientCertificate(); leaf != nil {
		a.ClientCert = &YarnClientCert{File: cfg.Yarn.CertFile, Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(), NotAfter: leaf.NotAfter}
	}
	return yarnInfo{Auth: a, Submission: submissionOf(cfg.Yarn)}
}

func submissionOf(y yarncluster.Config) YarnSubmission {
	s := YarnSubmission{SubmitAs: string(y.SubmitAs), RMToken: y.Tokens.RM}
	for _, h := range y.Tokens.HDFS {
		name := h.Service
		if name == "" && len(h.URLs) > 0 {
			name = h.URLs[0]
		}
		s.HDFS = append(s.HDFS, name)
	}
	if s.RMToken || len(s.HDFS) > 0 {
		s.Renewer = y.Tokens.Renewer
	}
	if s.SubmitAs == "" {
		s.SubmitAs = string(yarncluster.SubmitAsDaemon)
	}
	if !s.ByJobUser() {
		s.AppUser = y.DaemonUser()
	}
	return s
}

func yarnAuthOf(c *YarnRM) YarnAuth {
	switch a := c.Auth().(type) {
	case *kerberos.Auth:
		st := a.Status()
		return YarnAuth{Mode: "kerberos", Principal: st.Principal, Keytab: st.Keytab,
			TGTStart: st.TGTStart, TGTEnd: st.TGTEnd, RenewAt: st.RenewAt, ServiceTickets: st.ServiceTickets}
	case yarnclient.SimpleAuth:
		return YarnAuth{Mode: "simple", User: a.User}
	}
	return YarnAuth{Mode: fmt.Sprintf("%T", c.Auth())}
}
