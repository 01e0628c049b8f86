// Package yarntest holds test fakes for code that talks to YARN through
// yarnclient: FakeRM, a ResourceManager serving the documented REST API
// (Hadoop 3.x shapes, or 2.7 with the Hadoop2 option) from an in-memory
// cluster, and FakeNM, a NodeManager serving /ws/v1/node/containers. Both
// listen on 127.0.0.1 through net/http/httptest and close with the test.
//
// FakeRM allocates application ids application_<clusterTimestamp>_<%04d> on
// new-application, accepts submissions (202 + Location) and records them
// (Submissions, SubmitCalls; OnSubmit is told of each as it lands), moves apps ACCEPTED → RUNNING (StartApp, or
// AutoStart) and to an end (FinishApp, or a kill through the API), places
// containers on nodes (PlaceContainers), filters apps like the RM
// (states, queue, user, applicationTags, started/finished time, limit;
// the set-valued parameters repeated or comma-separated, unknown
// parameters ignored), serves 3.x resourceRequests unless deSelects says
// otherwise, acts as a standby RM (SetStandby, SetActiveURL), and injects
// faults per path (InjectFault: 5xx, a body that is not JSON, a truncated
// JSON body, a connection reset, or a request held until the test
// releases it). Populate starts it as a large production cluster
// (thousands of nodes, other tenants' running applications placed on
// them); Traffic counts the requests and the bytes it answered.
//
// Security, as Hadoop's filters and RMWebServices answer it: ProxyUser
// rules decide doAs (a refusal is 403 AuthorizationException "User: colocd
// is not allowed to impersonate alice"), ACLs restricts kills to the owner
// and yarn.admin.acl, POST /ws/v1/cluster/delegation-token issues RM
// delegation tokens over SPNEGO only, and a submission's
// am-container-spec.credentials tokens are decoded as the RM decodes them
// (Credentials; IssuedTokens and Genuine tell a token the fake issued).
// FakeWebHDFS is a NameNode's WebHDFS serving GETDELEGATIONTOKEN: HDFS
// delegation tokens for the caller or its doas user, {"Token":null} with
// security off, StandbyException as a standby.
//
// A second submission of a known application id is rejected with the RM's
// 400 "... is already present! Cannot add a duplicate!" (what a real RM says
// when two submissions race; a sequential resubmission it accepts as a no-op,
// which AcceptResubmission reproduces). Either way SubmitCalls counts every
// submission POST, so an exactly-once test can assert it is 1.
//
// It must not be imported by production code.
package yarntest
