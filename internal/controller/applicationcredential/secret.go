package applicationcredential

import (
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// CloudName is the cloud's name in the clouds.yaml the Secret holds (OS_CLOUD=openstack).
const CloudName = "openstack"

// Keys of the Secret: a clouds.yaml for tools that read one, and the same as OS_* variables
// for envFrom.
const (
	KeyCloudsYAML = "clouds.yaml"
)

// CredentialIDAnnotation on the Secret names the credential it holds (an ID is no secret): after
// a crash between the Secret's write and the status's, the next pass adopts it from there.
const CredentialIDAnnotation = "kupenstack.io/application-credential-id"

// secretData is the Secret's content for credential c on the cloud at loc.
func secretData(loc openstack.Location, c Credential) (map[string][]byte, error) {
	cloud := map[string]any{
		"auth_type": "v3applicationcredential",
		"auth": map[string]any{
			"auth_url":                      loc.AuthURL,
			"application_credential_id":     c.ID,
			"application_credential_secret": c.Secret,
		},
		"identity_api_version": 3,
	}
	env := map[string]string{
		"OS_AUTH_TYPE":                     "v3applicationcredential",
		"OS_AUTH_URL":                      loc.AuthURL,
		"OS_APPLICATION_CREDENTIAL_ID":     c.ID,
		"OS_APPLICATION_CREDENTIAL_SECRET": c.Secret,
		"OS_IDENTITY_API_VERSION":          "3",
	}
	if loc.Region != "" {
		cloud["region_name"] = loc.Region
		env["OS_REGION_NAME"] = loc.Region
	}
	if loc.Interface != "" {
		cloud["interface"] = loc.Interface
		env["OS_INTERFACE"] = loc.Interface
	}
	if loc.Insecure {
		// As the operator reaches the cloud; a CA file of the operator's is not copied.
		cloud["verify"] = false
		env["OS_INSECURE"] = "true"
	}
	doc, err := yaml.Marshal(map[string]any{"clouds": map[string]any{CloudName: cloud}})
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{KeyCloudsYAML: doc}
	for k, v := range env {
		data[k] = []byte(v)
	}
	return data, nil
}
