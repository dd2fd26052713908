// EndpointCheck reads node data with Jackson's ObjectMapper into a bean of
// Leaf's Endpoint shape (ip, port as strings, timestamp as a long), failing
// on unknown properties as Leaf's default ObjectMapper does, and prints the
// bean written back by Jackson. zklease's tests run it with `java
// EndpointCheck.java '<json>'` (a single-file source launch) to show that
// Leaf reads what zklease writes, and that zklease writes what Leaf writes.
import com.fasterxml.jackson.databind.ObjectMapper;

public class EndpointCheck {
    public static class Endpoint {
        private String ip;
        private String port;
        private long timestamp;

        public String getIp() { return ip; }
        public void setIp(String v) { ip = v; }
        public String getPort() { return port; }
        public void setPort(String v) { port = v; }
        public long getTimestamp() { return timestamp; }
        public void setTimestamp(long v) { timestamp = v; }
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        Endpoint e = mapper.readValue(args[0], Endpoint.class);
        System.out.print(mapper.writeValueAsString(e));
    }
}
