package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

class ChangeEventsTest {

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  private static final String OBJECT = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
      + "\"namespace\":\"default\",\"resourceVersion\":\"7\"},\"data\":{\"k\":\"v\"}}";

  @Test
  void aChangeInTheApiServersEncodingIsDecodedStraightIntoItsType() {
    for (String type : new String[] {"ADDED", "MODIFIED", "DELETED"}) {
      ChangeEvents.Change<ConfigMap> change = ChangeEvents.decode(serialization, ConfigMap.class,
          "{\"type\":\"" + type + "\",\"object\":" + OBJECT + "}\r");

      assertThat(change).isNotNull();
      assertThat(change.type()).isEqualTo(type);
      assertThat(change.object().getMetadata().getResourceVersion()).isEqualTo("7");
      assertThat(change.object().getData()).containsEntry("k", "v");
    }
  }

  @Test
  void anythingElseIsLeftToTheMapReading() {
    // other event types, another field order, no object, an object that cannot be read, no metadata
    for (String line : new String[] {
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}",
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}",
        "{\"object\":" + OBJECT + ",\"type\":\"MODIFIED\"}",
        "{\"type\":\"MODIFIED\",\"object\":}",
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":[1]}}",
        "{\"type\":\"MODIFIED\",\"object\":{\"data\":{}}}",
        "{\"type\":\"MODIFIED\",\"object\":null}"}) {
      assertThat(ChangeEvents.decode(serialization, ConfigMap.class, line)).as(line).isNull();
    }
  }
}
