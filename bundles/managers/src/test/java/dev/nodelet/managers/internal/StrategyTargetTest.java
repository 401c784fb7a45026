package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/** A bad {@code strategy.target} is named with the key and why, and the manager keeps working on its built-in get. */
class StrategyTargetTest {

  @Test
  void filtersThatScrCannotUseAreNamedWithTheKey() {
    assertThat(StrategyTarget.problem("(nodelet.strategy=ttl)")).isEmpty();
    assertThat(StrategyTarget.problem("(nodelet.strategy=not-installed-yet)")).isEmpty();
    assertThat(StrategyTarget.problem("ttl")).hasValueSatisfying(p -> assertThat(p)
        .startsWith("strategy.target \"ttl\" is not an LDAP filter (")
        .contains("built-in get, keeping every registration"));
    assertThat(StrategyTarget.problem("(nodelet.strategy=watch")).hasValueSatisfying(p -> assertThat(p)
        .startsWith("strategy.target \"(nodelet.strategy=watch\" is not an LDAP filter"));
    assertThat(StrategyTarget.problem(" ")).hasValueSatisfying(p -> assertThat(p)
        .startsWith("strategy.target is empty"));
  }

  @Test
  void bothComponentsStartAndAreReconfiguredWithABadTargetAndKeepTheirRegistrations() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      ManagerConfiguration bad = config("watch");
      for (ManagerComponent<?> component : List.<ManagerComponent<?>>of(
          new ConfigMapManagerComponent(client, new ManagerMetricsService(), bad),
          new SecretManagerComponent(client, new ManagerMetricsService(), bad))) {
        try {
          component.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u")
              .endMetadata().withNewSpec().addNewVolume().withName("v").withNewSecret().withSecretName("s")
              .endSecret().endVolume().addNewVolume().withName("c").withNewConfigMap().withName("s").endConfigMap()
              .endVolume().endSpec().build());
          component.modified(config("(broken"), Map.of());
          assertThat(component.builtInStrategy()).isTrue();
          assertThat(component.registeredPods()).containsExactly(new RegisteredPod("ns", "p", "u", List.of("s")));
        } finally {
          component.deactivate();
        }
      }
    }
  }

  @Test
  void aMisspeltTargetIsNamedOnceWithTheKeyItMeant() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      // what Declarative Services gives the component for etc/dev.nodelet.configmap.cfg holding strategy.targt
      Map<String, Object> configured = Map.of("strategy.targt", "(nodelet.strategy=ttl)");
      Map<String, Object> properties = new HashMap<>(configured);
      properties.putAll(Map.of("service.pid", ConfigMapManagerComponent.PID, "felix.fileinstall.filename",
          "file:/node/etc/dev.nodelet.configmap.cfg", "component.name", "x", "component.id", 3L,
          ObjectManager.RESOURCE_PROPERTY, "configmaps", ObjectManager.PID_PROPERTY, ConfigMapManagerComponent.PID));
      ManagerConfiguration config = Converters.standardConverter().convert(configured)
          .to(ManagerConfiguration.class);
      ConfigMapManagerComponent component = new ConfigMapManagerComponent(client, new ManagerMetricsService(),
          config, properties);
      try {
        component.modified(config, properties);
        assertThat(component.unknownKeys()).containsExactly("Configuration dev.nodelet.configmap: unknown key "
            + "strategy.targt is ignored; did you mean strategy.target? (etc/dev.nodelet.configmap.cfg)");
        assertThat(component.strategy()).as("the default strategy stays in force").isNotEqualTo("ttl");
      } finally {
        component.deactivate();
      }
    }
  }

  private static ManagerConfiguration config(String target) {
    return Converters.standardConverter().convert(Map.of("strategy.target", target)).to(ManagerConfiguration.class);
  }
}
