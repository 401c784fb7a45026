package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/** The configuration dev.nodelet.pods: defaults, and one clear error per bad value. */
class PodsSettingsTest {

  private static PodsComponent.Settings settings(Map<String, Object> properties) {
    return PodsComponent.Settings.from(Converters.standardConverter().convert(properties)
        .to(PodsConfiguration.class));
  }

  @Test
  void defaults() {
    PodsComponent.Settings settings = settings(Map.of());
    assertThat(settings.localRepository()).isEqualTo(Path.of(System.getProperty("user.home"), ".m2",
        "repository"));
    assertThat(settings.remoteRepositories()).isEmpty();
    assertThat(settings.capacity()).isEqualTo(110);
    assertThat(settings.workDir()).isNull();
  }

  @Test
  void values() {
    PodsComponent.Settings settings = settings(Map.of("maven.local.repository", "/srv/repo",
        "maven.remote.repositories", new String[] {"https://repo.example.org/maven2"},
        "allowed.groups", new String[] {" org.example.* ", ""}, "pods.capacity", 5));
    assertThat(settings.localRepository()).isEqualTo(Path.of("/srv/repo"));
    assertThat(settings.remoteRepositories()).containsExactly(URI.create("https://repo.example.org/maven2"));
    assertThat(settings.allowedGroups()).containsExactly("org.example.*");
    assertThat(settings.capacity()).isEqualTo(5);
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> settings(Map.of("maven.remote.repositories", "http://repo.example.org")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maven.remote.repositories: must be https URLs, was http://repo.example.org");
    assertThatThrownBy(() -> settings(Map.of("pods.capacity", 0))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pods.capacity: must be between 1 and 10000");
  }
}
