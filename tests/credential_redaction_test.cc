// The one credential redactor (core/credential_redaction.h), property-style: for every
// combination of scheme spelling, user information shape, host, path and the text around the URL,
// neither the user name nor the password appears in what a message may show (issue 18, finding 14).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/credential_redaction.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {
namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

struct Credential {
  std::string user;
  std::string password;
};

// User names and passwords chosen so that no part of them is a part of any host, path or context
// below: a hit in the output is a leak.
const std::vector<Credential>& credentials() {
  static const std::vector<Credential> all = {
      {"Zuser", "Qpass"},
      {"Zuser", "Qp/ss"},
      {"Zuser", "Qp@ss"},
      {"Zuser", "Qp:ss"},
      {"Zuser", "Q/p@s:s/"},
      {"Zuser", "Qp#ss"},
      {"Zuser", "Qp?s=s"},
      {"Zuser", "Qp%40ss"},
      {"Zuser", "Q'p\"s)s("},
      {"Zuser", "Qp\\ss"},
      {"Zu@ser", "Qpass"},
      {"Zu/ser", "Qpass"},
      {"Zuser", ""},
      {"Zuser", "Qp//s:/s"},
      {"Zuser", "Qhttp://x"},
      {"Zuser", "Qp@@ss@"},
      {"Zuser", "Q\xc3\xa9p\xe2\x82\xac"},
      {"Zuser", "Qp&token=s"},
      {"Zuser", "Q;p,s]s"},
  };
  return all;
}

const std::vector<std::string>& schemes() {
  static const std::vector<std::string> all = {"http://",
                                               "HTTP://",
                                               "HtTpS://",
                                               "https://",
                                               "htp://",
                                               "hxxp://",
                                               "http:/",
                                               "http:",
                                               "http:\\\\",
                                               "http:///",
                                               "",
                                               "s3://",
                                               "mlflow-artifacts://",
                                               "sqlite:///"};
  return all;
}

const std::vector<std::string>& hosts() {
  static const std::vector<std::string> all = {"127.0.0.1:5000", "mlflow.example.org", "[::1]:8080", "h"};
  return all;
}

const std::vector<std::string>& paths() {
  static const std::vector<std::string> all = {"", "/", "/api/2.0/mlflow/runs/search?run_id=abc", "/a@b/c", "#frag"};
  return all;
}

// Messages a URL may stand in.
const std::vector<std::pair<std::string, std::string>>& contexts() {
  static const std::vector<std::pair<std::string, std::string>> all = {
      {"", ""},
      {"error: ", ": cannot reach the MLflow server"},
      {"--tracking-uri must be http://HOST:PORT (got '", "')"},
      {"(", ")"},
      {"\"uri\": \"", "\"}"},
      {"uri=", "&x=1"},
      {"<a href=", ">"},
  };
  return all;
}

void expect_hidden(const std::string& shown, const Credential& c, const std::string& input) {
  EXPECT_FALSE(contains(shown, c.user)) << "input:  " << input << "\nshown:  " << shown;
  if (!c.password.empty()) {
    EXPECT_FALSE(contains(shown, c.password)) << "input:  " << input << "\nshown:  " << shown;
  }
}

TEST(CredentialRedaction, NoUrlFormShowsItsUserInformation) {
  int checked = 0;
  for (const Credential& c : credentials()) {
    const std::string userinfo = c.password.empty() ? c.user : c.user + ":" + c.password;
    for (const std::string& scheme : schemes()) {
      for (const std::string& host : hosts()) {
        for (const std::string& path : paths()) {
          const std::string url = scheme + userinfo + "@" + host + path;
          expect_hidden(redact_url(url), c, url);
          for (const auto& [before, after] : contexts()) {
            const std::string message = before + url + after;
            expect_hidden(redact_credentials(message), c, message);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 7000);
}

TEST(CredentialRedaction, UrlsKeepWhatIsNotSecret) {
  EXPECT_EQ(redact_url("http://127.0.0.1:5000"), "http://127.0.0.1:5000");
  EXPECT_EQ(redact_url("http://user:secret@127.0.0.1:5000/prefix"), "http://127.0.0.1:5000/prefix");
  EXPECT_EQ(redact_url("HTTP://user:secret@host"), "HTTP://host");
  EXPECT_EQ(redact_url("http:/user:secret@host"), "http:/host");
  EXPECT_EQ(redact_url("https://user:se/cr@t@host:443/x"), "https://host:443/x");
  EXPECT_EQ(redact_url("user:secret@host:5000"), "host:5000");
  EXPECT_EQ(redact_url("sqlite:///mlflow.db"), "sqlite:///mlflow.db");
  EXPECT_EQ(redact_url("mllogs/mlflow"), "mllogs/mlflow");
  // A password with white space: the string is one URL, so all of it goes.
  EXPECT_EQ(redact_url("http://user:two words@host"), "http://host");
  EXPECT_EQ(redact_credentials("cannot reach http://u:p@host:5000: refused"), "cannot reach http://host:5000: refused");
  EXPECT_EQ(redact_credentials("(got 'HTTP://u:p@host')"), "(got 'HTTP://host')");
}

TEST(CredentialRedaction, KnownSecretsAnywhereInServerText) {
  const std::vector<std::string> secrets = {"tok-ABCDEF123", "pa ss/w@rd"};
  EXPECT_EQ(redact_credentials("invalid token tok-ABCDEF123 for user", secrets), "invalid token *** for user");
  EXPECT_EQ(redact_credentials("password pa ss/w@rd is wrong", secrets), "password *** is wrong");
  // Percent-encoded, as a proxy may echo a query string.
  EXPECT_EQ(redact_credentials("GET /?p=pa%20ss%2Fw%40rd", secrets), "GET /?p=***");
  // An empty secret hides nothing; a short one only where it stands alone.
  EXPECT_EQ(redact_credentials("abc", std::vector<std::string>{""}), "abc");
  EXPECT_EQ(redact_credentials("experiments/get x: x!", std::vector<std::string>{"x"}), "experiments/get ***: ***!");
  EXPECT_EQ(redact_credentials("bad token: abc12", std::vector<std::string>{"abc12"}), "bad token: ***");
}

TEST(CredentialRedaction, SecretLookingValuesWithoutKnowingThem) {
  EXPECT_EQ(redact_credentials("Authorization: Bearer eyJhbGciOi.x.y"), "Authorization: ***");
  EXPECT_EQ(redact_credentials("authorization=Basic dXNlcjpwYXNz, next"), "authorization=***, next");
  EXPECT_EQ(redact_credentials(R"({"Authorization": "Token abc def"})"), R"({"Authorization": "***"})");
  EXPECT_EQ(redact_credentials("echo: bearer abc.def.ghi end"), "echo: bearer *** end");
  EXPECT_EQ(redact_credentials("GET /x?token=abc123&run=1"), "GET /x?token=***&run=1");
  EXPECT_EQ(redact_credentials("password: hunter2"), "password: ***");
  EXPECT_EQ(redact_credentials(R"({"access_token":"a.b.c","user":"x"})"), R"({"access_token":"***","user":"x"})");
  EXPECT_EQ(redact_credentials("MLFLOW_TRACKING_PASSWORD=s3 and more"), "MLFLOW_TRACKING_PASSWORD=*** and more");
  EXPECT_EQ(redact_credentials("api_key='k-1'"), "api_key='***'");
  // Words that merely mention a secret stay readable.
  EXPECT_EQ(redact_credentials("set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD"),
            "set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD");
  EXPECT_EQ(redact_credentials("runs/search: HTTP 500: INTERNAL_ERROR: boom"),
            "runs/search: HTTP 500: INTERNAL_ERROR: boom");
}

TEST(CredentialRedaction, TrackingUriErrorsNeverShowCredentials) {
  for (const std::string uri :
       {"htp://alice:Qsecret@host:5000", "HTTPX://alice:Qsecret@host", "http:/alice:Qsecret@host",
        "http:alice:Qsecret@h", "databricks://alice:Qs/ecret@profile", "sqlite://alice:Qsecret@host/db",
        "file://alice:Qsecret@otherhost/x"}) {
    auto parsed = parse_tracking_uri(uri);
    ASSERT_FALSE(parsed) << uri;
    EXPECT_FALSE(contains(parsed.error().message, "alice")) << parsed.error().message;
    EXPECT_FALSE(contains(parsed.error().message, "Qs")) << parsed.error().message;
  }
  // Any case of the scheme is a server.
  auto upper = parse_tracking_uri("HTTP://127.0.0.1:5000/");
  ASSERT_TRUE(upper) << upper.error().message;
  EXPECT_EQ(upper.value().kind, TrackingKind::kServer);
  EXPECT_EQ(upper.value().location, "HTTP://127.0.0.1:5000");
}

}  // namespace
}  // namespace scaleprof::importers
