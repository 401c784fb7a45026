package dev.nodelet.shell.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shared text of the shells; the Gogo commands' own test covers the listings on live managers. */
class ObjectViewsTest {

  @Test
  void kindsMeanPluralResourceNames() {
    assertThat(ObjectViews.plural("cm")).isEqualTo("configmaps");
    assertThat(ObjectViews.plural("ConfigMap")).isEqualTo("configmaps");
    assertThat(ObjectViews.plural("secret")).isEqualTo("secrets");
    assertThat(ObjectViews.plural("Secrets")).isEqualTo("secrets");
  }

  @Test
  void strategyTargetsAdmitNoFilterSyntax() {
    assertThat(ObjectViews.strategyTarget("watch")).isEqualTo("(nodelet.strategy=watch)");
    assertThatThrownBy(() -> ObjectViews.strategyTarget("watch)(x=*")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid strategy name");
  }

  @Test
  void aSecretIsRedactedUnlessAskedAndTheOriginalStaysAsItWas() {
    Secret secret = new SecretBuilder().withNewMetadata().withNamespace("ns").withName("db")
        .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{\"data\":{\"k\":\"c2VjcmV0\"}}")
        .endMetadata().withData(Map.of("k", "c2VjcmV0")).withStringData(Map.of("s", "plain")).build();
    KubernetesSerialization serialization = new KubernetesSerialization();

    String redacted = ObjectViews.yaml(serialization, secret, false);
    assertThat(redacted).contains("<redacted, 6 bytes>", "<redacted, 5 bytes>")
        .doesNotContain("c2VjcmV0", "plain");
    assertThat(ObjectViews.yaml(serialization, secret, true)).contains("c2VjcmV0");
    assertThat(secret.getData()).containsEntry("k", "c2VjcmV0");
  }
}
