package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an image names, what is refused with which message, and the checks before install. */
class ImageRefTest {

  @TempDir
  Path dir;

  @Test
  void mavenImagesWithTypeClassifierAndDigest() {
    ImageRef ref = ImageRef.parse("mvn:org.example/hello/1.0.0/jar/tests@sha256:" + "AB".repeat(32));
    assertThat(ref.kind()).isEqualTo(ImageRef.Kind.MAVEN);
    assertThat(ref.repositoryPath()).isEqualTo("org/example/hello/1.0.0/hello-1.0.0-tests.jar");
    assertThat(ref.digest()).isEqualTo("ab".repeat(32));
    assertThat(ref.artifact()).isEqualTo("mvn:org.example/hello/1.0.0/jar/tests");
    assertThat(ImageRef.parse("mvn:g/a/1").artifact()).isEqualTo("mvn:g/a/1");
  }

  @Test
  void urlImages() {
    assertThat(ImageRef.parse("file:/opt/b.jar").kind()).isEqualTo(ImageRef.Kind.FILE);
    assertThat(ImageRef.parse("https://example.org/b.jar").kind()).isEqualTo(ImageRef.Kind.HTTPS);
  }

  @Test
  void badImagesSayWhatIsWrong() {
    assertThatThrownBy(() -> ImageRef.parse("nginx:latest")).hasMessageContaining("image nginx:latest: an image "
        + "names a bundle as mvn:group/artifact/version");
    assertThatThrownBy(() -> ImageRef.parse("mvn:g/a")).hasMessageContaining("mvn:group/artifact/version");
    assertThatThrownBy(() -> ImageRef.parse("mvn:g/../1")).hasMessageContaining("\"..\" is not a valid Maven");
    assertThatThrownBy(() -> ImageRef.parse("mvn:g/a/1@sha256:abc")).hasMessageContaining("64 hex digits");
    assertThatThrownBy(() -> ImageRef.parse("http://example.org/b.jar")).hasMessageContaining("https: URL");
    assertThatThrownBy(() -> ImageRef.parse(" ")).hasMessageContaining("the image is empty");
  }

  @Test
  void allowedGroupsAndUrlsAreCheckedBeforeAnythingIsRead() throws Exception {
    Path repo = Files.createDirectories(dir.resolve("repo"));
    Path jar = TestBundles.write(repo, "org.example", "hello", "1.0.0", null);
    ImageSource source = new ImageSource(repo, List.of(), List.of("org.trusted.*"), List.of("-"), dir);
    assertThatThrownBy(() -> source.fetch(ImageRef.parse("mvn:org.example/hello/1.0.0")))
        .hasMessage("image mvn:org.example/hello/1.0.0 is not allowed: group org.example is not in allowed.groups "
            + "of dev.nodelet.pods");
    assertThatThrownBy(() -> source.fetch(ImageRef.parse(jar.toUri().toString())))
        .hasMessageContaining("is not allowed: it starts with none of allowed.urls");
    assertThatThrownBy(() -> new ImageSource(repo, List.of(), List.of("org.trusted.*"), List.of(), dir)
        .fetch(ImageRef.parse("feature:tiny/1.0.0")))
        .hasMessageStartingWith("image feature:tiny/1.0.0 is not allowed: allowed.groups or allowed.urls of "
            + "dev.nodelet.pods restrict what pods install");

    ImageSource open = new ImageSource(repo, List.of(), List.of("org.example"), List.of(), dir);
    assertThat(open.fetch(ImageRef.parse(jar.toUri().toString())).symbolicName()).isEqualTo("org.example.hello");
    assertThat(open.fetch(ImageRef.parse("mvn:org.example/hello/1.0.0")).imageId())
        .isEqualTo("sha256:" + TestBundles.sha256(jar));
    assertThatThrownBy(() -> open.fetch(ImageRef.parse("file:" + dir.resolve("none.jar"))))
        .hasMessageContaining("not found: no file");
  }
}
