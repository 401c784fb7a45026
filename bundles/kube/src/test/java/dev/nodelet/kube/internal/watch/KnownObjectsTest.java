package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A reflector's known objects: one object without a map, a map from the second on; and its line splitting. */
class KnownObjectsTest {

  private static ConfigMap cm(String namespace, String name, String version) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace(namespace).withName(name)
        .withResourceVersion(version).endMetadata().build();
  }

  @Test
  void oneObjectIsReplacedInPlaceAndFoundByNamespaceAndName() {
    KnownObjects<ConfigMap> known = new KnownObjects<>();
    ConfigMap first = cm("ns", "a", "1");
    ConfigMap second = cm("ns", "a", "2");

    assertThat(known.put(first)).isNull();
    assertThat(known.put(second)).isSameAs(first);

    assertThat(known.get("ns", "a")).isSameAs(second);
    assertThat(known.get("other", "a")).isNull();
    assertThat(known.get("ns", "b")).isNull();
    assertThat(known.values()).containsExactly(second);
    assertThat(known.remove(cm("ns", "b", "3"))).isNull();
    assertThat(known.remove(cm("ns", "a", "3"))).isSameAs(second);
    assertThat(known.values()).isEmpty();
    assertThat(known.get("ns", "a")).isNull();
  }

  @Test
  void aSecondObjectMovesAllIntoAMapThatKeepsWorking() {
    KnownObjects<ConfigMap> known = new KnownObjects<>();
    ConfigMap a = cm("ns", "a", "1");
    ConfigMap b = cm("ns", "b", "2");
    ConfigMap c = cm("other", "a", "3");
    known.put(a);
    known.put(b);
    known.put(c);

    assertThat(known.get("ns", "a")).isSameAs(a);
    assertThat(known.get("ns", "b")).isSameAs(b);
    assertThat(known.get("other", "a")).isSameAs(c);
    assertThat(known.values()).containsExactlyInAnyOrder(a, b, c);
    ConfigMap newerB = cm("ns", "b", "4");
    assertThat(known.put(newerB)).isSameAs(b);
    assertThat(known.remove(a)).isSameAs(a);
    assertThat(known.values()).containsExactlyInAnyOrder(newerB, c);
  }

  @Test
  void retainOnlyRemovesAndReturnsWhatTheOtherDoesNotHold() {
    KnownObjects<ConfigMap> known = new KnownObjects<>();
    ConfigMap a = cm("ns", "a", "1");
    ConfigMap b = cm("ns", "b", "1");
    known.put(a);
    known.put(b);
    KnownObjects<ConfigMap> listed = new KnownObjects<>();
    listed.put(cm("ns", "b", "2"));

    assertThat(known.retainOnly(listed)).containsExactly(a);
    assertThat(known.values()).containsExactly(b);

    KnownObjects<ConfigMap> single = new KnownObjects<>();
    single.put(a);
    assertThat(single.retainOnly(new KnownObjects<>())).containsExactly(a);
    assertThat(single.values()).isEmpty();
  }

  @Test
  void linesSpanningChunksAreJoinedAndNoBufferIsKeptBetweenWholeLines() {
    LineSplitter lines = new LineSplitter();

    assertThat(lines.feed(bytes("{\"a\":1}\n{\"b\""))).containsExactly("{\"a\":1}");
    assertThat(lines.rest()).isEqualTo("{\"b\"");
    assertThat(lines.feed(bytes(":2}\nü\n"))).containsExactly("{\"b\":2}", "ü");
    assertThat(lines.rest()).isEmpty();
    byte[] umlaut = bytes("ü\n");
    assertThat(lines.feed(new byte[] {umlaut[0]})).isEmpty(); // a character split between chunks
    assertThat(lines.feed(new byte[] {umlaut[1], umlaut[2]})).containsExactly("ü");
    assertThat(lines.rest()).isEmpty();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
