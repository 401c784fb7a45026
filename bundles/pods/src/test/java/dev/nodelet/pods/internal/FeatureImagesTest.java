package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Images that name a Karaf feature: their form, and what a framework without Karaf (Felix here) says of them. */
class FeatureImagesTest {

  @TempDir
  Path dir;

  @Test
  void aFeatureImageIsFeatureNameAndAnOptionalVersion() {
    ImageRef versioned = ImageRef.parse("feature:tiny/1.0.0");
    assertThat(versioned.kind()).isEqualTo(ImageRef.Kind.FEATURE);
    assertThat(versioned.artifactId()).isEqualTo("tiny");
    assertThat(versioned.version()).isEqualTo("1.0.0");
    assertThat(versioned.artifact()).isEqualTo("feature:tiny/1.0.0");
    ImageRef newest = ImageRef.parse("feature:tiny");
    assertThat(newest.version()).isEmpty();
    assertThat(newest.artifact()).isEqualTo("feature:tiny");
  }

  @Test
  void badFeatureImagesSayWhatIsWrong() {
    assertThatThrownBy(() -> ImageRef.parse("feature:")).hasMessage("image feature:: a feature image is "
        + "feature:name[/version] (letters, digits, '.', '_', '-')");
    assertThatThrownBy(() -> ImageRef.parse("feature:a/1/2")).hasMessageContaining("feature:name[/version]");
    assertThatThrownBy(() -> ImageRef.parse("feature:a b")).hasMessageContaining("feature:name[/version]");
    assertThatThrownBy(() -> ImageRef.parse("feature:a/1@sha256:" + "0".repeat(64)))
        .hasMessage("image feature:a/1@sha256:" + "0".repeat(64) + ": a feature image has no digest; write "
            + "feature:name[/version]");
  }

  @Test
  void withoutKarafAFeatureImageIsErrImagePullSayingFeaturesNeedKaraf() throws Exception {
    try (PodsHarness h = new PodsHarness(dir)) {
      h.run(PodLifecycleTest.pod("p", "feature:tiny/1.0.0"));
      ContainerStatus c = h.container("p", "c0");
      assertThat(c.getState().getWaiting().getReason()).isEqualTo("ErrImagePull");
      assertThat(c.getState().getWaiting().getMessage()).isEqualTo("image feature:tiny/1.0.0 names a Karaf "
          + "feature: features need Apache Karaf's FeaturesService, which this framework does not have; name a "
          + "bundle (mvn:, file: or https:)");
      assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();
    }
  }
}
