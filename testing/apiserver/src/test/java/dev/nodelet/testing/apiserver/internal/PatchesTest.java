package dev.nodelet.testing.apiserver.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** Merge patch (RFC 7386), strategic merge patch and server-side apply on JSON trees. */
class PatchesTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(String s) {
    try {
      return JSON.readTree(s.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(s, e);
    }
  }

  @Test
  void mergePatchFollowsRfc7386() {
    // the examples of RFC 7386, appendix A
    String[][] cases = {
        {"{'a':'b'}", "{'a':'c'}", "{'a':'c'}"},
        {"{'a':'b'}", "{'b':'c'}", "{'a':'b','b':'c'}"},
        {"{'a':'b'}", "{'a':null}", "{}"},
        {"{'a':'b','b':'c'}", "{'a':null}", "{'b':'c'}"},
        {"{'a':['b']}", "{'a':'c'}", "{'a':'c'}"},
        {"{'a':'c'}", "{'a':['b']}", "{'a':['b']}"},
        {"{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}", "{'a':{'b':'d'}}"},
        {"{'a':[{'b':'c'}]}", "{'a':[1]}", "{'a':[1]}"},
        {"['a','b']", "['c','d']", "['c','d']"},
        {"{'a':'b'}", "['c']", "['c']"},
        {"{'e':null}", "{'a':1}", "{'e':null,'a':1}"},
        {"[1,2]", "{'a':'b','c':null}", "{'a':'b'}"},
        {"{}", "{'a':{'bb':{'ccc':null}}}", "{'a':{'bb':{}}}"},
    };
    for (String[] c : cases) {
      assertThat(Patches.merge(json(c[0]), json(c[1]))).as(c[0] + " + " + c[1]).isEqualTo(json(c[2]));
    }
  }

  @Test
  void strategicMergePatchMergesListsByTheirKeys() {
    JsonNode pod = json("{'spec':{'containers':[{'name':'a','image':'a:1'},{'name':'b','image':'b:1'}],"
        + "'tolerations':[{'key':'x'}]},'metadata':{'finalizers':['f1']}}");
    JsonNode patched = Patches.strategic(pod, json("{'spec':{'containers':[{'name':'b','image':'b:2'},"
        + "{'name':'c','image':'c:1'}],'tolerations':[{'key':'y'}]},'metadata':{'finalizers':['f2']}}"));
    assertThat(patched).isEqualTo(json("{'spec':{'containers':[{'name':'a','image':'a:1'},"
        + "{'name':'b','image':'b:2'},{'name':'c','image':'c:1'}],'tolerations':[{'key':'y'}]},"
        + "'metadata':{'finalizers':['f1','f2']}}"));
  }

  @Test
  void strategicMergePatchDirectives() {
    JsonNode node = json("{'spec':{'taints':[{'key':'a','effect':'NoSchedule'},{'key':'b','effect':'NoExecute'}]},"
        + "'metadata':{'finalizers':['f1','f2'],'labels':{'x':'1','y':'2'}}}");
    assertThat(Patches.strategic(node, json("{'spec':{'taints':[{'key':'a','$patch':'delete'}]}}"))
        .path("spec").path("taints")).isEqualTo(json("[{'key':'b','effect':'NoExecute'}]"));
    assertThat(Patches.strategic(node, json("{'metadata':{'$deleteFromPrimitiveList/finalizers':['f1']}}"))
        .path("metadata").path("finalizers")).isEqualTo(json("['f2']"));
    assertThat(Patches.strategic(node, json("{'metadata':{'labels':{'$patch':'replace','z':'3'}}}"))
        .path("metadata").path("labels")).isEqualTo(json("{'z':'3'}"));
    assertThat(Patches.strategic(node, json("{'metadata':{'labels':{'x':null}}}"))
        .path("metadata").path("labels")).isEqualTo(json("{'y':'2'}"));
    assertThat(Patches.strategic(node, json("{'spec':{'$retainKeys':['other'],'other':1}}")).path("spec"))
        .isEqualTo(json("{'other':1}"));
    assertThat(Patches.strategic(node, json("{'spec':{'taints':[{'key':'c'},{'$patch':'replace'}]}}"))
        .path("spec").path("taints")).isEqualTo(json("[{'key':'c'}]"));
    assertThatThrownBy(() -> Patches.strategic(node, json("{'$bogus':1}")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("$bogus");
  }

  @Test
  void containerAndServicePortsMergeOnTheirOwnKeys() {
    JsonNode container = json("{'ports':[{'containerPort':80,'name':'http'}]}");
    assertThat(Patches.strategic(container, json("{'ports':[{'containerPort':80,'name':'web'},"
        + "{'containerPort':443}]}"))).isEqualTo(json("{'ports':[{'containerPort':80,'name':'web'},"
        + "{'containerPort':443}]}"));
    JsonNode service = json("{'ports':[{'port':80,'protocol':'TCP'}]}");
    assertThat(Patches.strategic(service, json("{'ports':[{'port':80,'targetPort':8080}]}")))
        .isEqualTo(json("{'ports':[{'port':80,'protocol':'TCP','targetPort':8080}]}"));
  }

  @Test
  void applyCreatesAndTracksTheFieldsOfEachManager() {
    ObjectNode config = (ObjectNode) json("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c',"
        + "'labels':{'a':'1'}},'data':{'k':'v','j':'w'}}");
    Apply.Result created = Apply.apply(null, config, "alice", "v1", false);
    ObjectNode stored = created.object();
    JsonNode entry = stored.path("metadata").path("managedFields").get(0);
    assertThat(entry.path("manager").asText()).isEqualTo("alice");
    assertThat(entry.path("operation").asText()).isEqualTo("Apply");
    assertThat(entry.path("fieldsType").asText()).isEqualTo("FieldsV1");
    assertThat(entry.path("fieldsV1")).isEqualTo(json("{'f:metadata':{'f:labels':{'f:a':{}}},"
        + "'f:data':{'f:k':{},'f:j':{}}}"));

    // bob sets another value on alice's field: a conflict, unless forced
    ObjectNode bob = (ObjectNode) json("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
        + "'data':{'k':'other','b':'x'}}");
    Apply.Result conflict = Apply.apply(stored, bob, "bob", "v1", false);
    assertThat(conflict.object()).isNull();
    assertThat(conflict.conflicts()).containsExactly(java.util.Map.entry(".data.k", "\"alice\""));
    // the same value is shared ownership, no conflict
    ObjectNode same = (ObjectNode) json("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
        + "'data':{'k':'v'}}");
    assertThat(Apply.apply(stored, same, "bob", "v1", false).conflicts()).isEmpty();

    Apply.Result forced = Apply.apply(stored, bob, "bob", "v1", true);
    assertThat(forced.object().path("data")).isEqualTo(json("{'k':'other','j':'w','b':'x'}"));
    JsonNode managers = forced.object().path("metadata").path("managedFields");
    assertThat(managers.get(0).path("fieldsV1").path("f:data").has("f:k")).isFalse(); // alice lost it
    assertThat(managers.get(1).path("manager").asText()).isEqualTo("bob");

    // alice stops applying j: it goes; k is bob's now and stays
    ObjectNode less = (ObjectNode) json("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c',"
        + "'labels':{'a':'1'}}}");
    Apply.Result after = Apply.apply(forced.object(), less, "alice", "v1", false);
    assertThat(after.object().path("data")).isEqualTo(json("{'k':'other','b':'x'}"));
  }

  @Test
  void applyMergesKeyedListsPerElement() {
    ObjectNode pod = (ObjectNode) json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{"
        + "'containers':[{'name':'a','image':'a:1'}]}}");
    ObjectNode stored = Apply.apply(null, pod, "alice", "v1", false).object();
    assertThat(stored.path("metadata").path("managedFields").get(0).path("fieldsV1").path("f:spec")
        .path("f:containers").has("k:{\"name\":\"a\"}")).isTrue();
    ObjectNode sidecar = (ObjectNode) json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{"
        + "'containers':[{'name':'b','image':'b:1'}]}}");
    Apply.Result both = Apply.apply(stored, sidecar, "bob", "v1", false);
    assertThat(both.conflicts()).isEmpty();
    assertThat(both.object().path("spec").path("containers")).isEqualTo(json("[{'name':'a','image':'a:1'},"
        + "{'name':'b','image':'b:1'}]"));
    // a conflict in a keyed element names it as the API server does
    ObjectNode retag = (ObjectNode) json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{"
        + "'containers':[{'name':'a','image':'a:2'}]}}");
    assertThat(Apply.apply(both.object(), retag, "bob", "v1", false).conflicts())
        .containsOnlyKeys(".spec.containers[name=\"a\"].image");
  }
}
