package dev.nodelet.objectcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import org.junit.jupiter.api.Test;

class ErrorsTest {

  @Test
  void messagesAreTheKubelets() {
    assertThat(new NotRegisteredException("ns", "name")).hasMessage("object \"ns\"/\"name\" not registered");
    assertThat(new ObjectNotFoundException("configmaps", "ns", "name")).hasMessage("configmaps \"name\" not found");
    assertThat(new CacheSyncException("secrets"))
        .hasMessage("failed to sync secrets cache: timed out waiting for the condition");
    // the kubelet's text first, then the object and the reason
    assertThat(new CacheSyncException("secrets", "ns", "name", "the API server is unreachable", null))
        .hasMessage("failed to sync secrets cache: timed out waiting for the condition (secrets \"ns\"/\"name\": "
            + "the API server is unreachable)");
  }

  @Test
  void immutableMeansImmutableTrue() {
    assertThat(ResourceType.CONFIG_MAPS.isImmutable(new ConfigMapBuilder().withImmutable(true).build())).isTrue();
    assertThat(ResourceType.CONFIG_MAPS.isImmutable(new ConfigMapBuilder().withImmutable(false).build())).isFalse();
    assertThat(ResourceType.CONFIG_MAPS.isImmutable(new ConfigMapBuilder().build())).isFalse();
    assertThat(ResourceType.SECRETS.isImmutable(new SecretBuilder().withImmutable(true).build())).isTrue();
    assertThat(ResourceType.SECRETS.isImmutable(new SecretBuilder().build())).isFalse();
  }

  @Test
  void aWrongTypeNamesTheClassButNotTheContent() {
    Object secret = new SecretBuilder().addToStringData("password", "hunter2").build();
    assertThatThrownBy(() -> ResourceType.CONFIG_MAPS.cast(secret))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("unexpected object type: io.fabric8.kubernetes.api.model.Secret");
  }
}
