package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http.HttpField;
import dev.nodelet.kube.internal.jetty.http.HttpFields;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The response of a streaming request: its status and headers, and the exchange as its body. */
record Http2Answer(HttpRequest request, int code, HttpFields fields, AsyncBody body)
    implements HttpResponse<AsyncBody> {

  @Override
  public List<String> headers(String name) {
    return fields.getValuesList(name);
  }

  @Override
  public Map<String, List<String>> headers() {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (HttpField field : fields) {
      headers.computeIfAbsent(field.getName(), k -> new ArrayList<>()).add(field.getValue());
    }
    return headers;
  }

  @Override
  public Optional<HttpResponse<?>> previousResponse() {
    return Optional.empty();
  }
}
